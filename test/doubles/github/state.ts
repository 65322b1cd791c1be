// In-memory state of the GitHub REST double and the JSON shapes it serialises to.
// Branch facts (existence, SHAs, commit counts, default branch) come from real bare repos via git.
import { execFile, execFileSync } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";

export const DOCS = "https://docs.github.com/rest";
const WEB = "https://github.com";

export interface GitHubUser {
	login: string;
	id: number;
	node_id: string;
	avatar_url: string;
	html_url: string;
	url: string;
	type: "User" | "Bot";
	site_admin: boolean;
}

export interface GitHubLabel {
	id: number;
	node_id: string;
	url: string;
	name: string;
	color: string;
	default: boolean;
	description: string | null;
}

export interface GitHubRepo {
	id: number;
	node_id: string;
	name: string;
	full_name: string;
	private: boolean;
	owner: GitHubUser;
	html_url: string;
	url: string;
	clone_url: string;
	default_branch: string;
	permissions: { admin: boolean; push: boolean; pull: boolean };
}

export interface GitHubIssue {
	id: number;
	node_id: string;
	url: string;
	html_url: string;
	comments_url: string;
	labels_url: string;
	number: number;
	state: "open" | "closed";
	state_reason: string | null;
	title: string;
	body: string | null;
	user: GitHubUser;
	labels: GitHubLabel[];
	assignee: GitHubUser | null;
	assignees: GitHubUser[];
	locked: boolean;
	comments: number;
	created_at: string;
	updated_at: string;
	closed_at: string | null;
	closed_by?: GitHubUser | null;
	author_association: string;
	pull_request?: {
		url: string;
		html_url: string;
		diff_url: string;
		patch_url: string;
		merged_at: string | null;
	};
}

interface GitHubBranchRef {
	label: string;
	ref: string;
	sha: string;
	user: GitHubUser;
	repo: GitHubRepo;
}

/** The list form of a pull request (GET /pulls); the detail form adds `merged` and friends. */
export interface GitHubPull {
	id: number;
	node_id: string;
	url: string;
	html_url: string;
	diff_url: string;
	patch_url: string;
	issue_url: string;
	comments_url: string;
	number: number;
	state: "open" | "closed";
	locked: boolean;
	title: string;
	body: string | null;
	user: GitHubUser;
	labels: GitHubLabel[];
	assignees: GitHubUser[];
	requested_reviewers: GitHubUser[];
	created_at: string;
	updated_at: string;
	closed_at: string | null;
	merged_at: string | null;
	merge_commit_sha: string | null;
	head: GitHubBranchRef;
	base: GitHubBranchRef;
	author_association: string;
	auto_merge: null;
	draft: boolean;
	// Detail-only fields (GET /pulls/{n}, POST, PATCH, webhooks).
	merged?: boolean;
	mergeable?: boolean | null;
	mergeable_state?: string;
	merged_by?: GitHubUser | null;
	comments?: number;
	maintainer_can_modify?: boolean;
	commits?: number;
}

export interface GitHubComment {
	id: number;
	node_id: string;
	url: string;
	html_url: string;
	issue_url: string;
	body: string;
	user: GitHubUser;
	created_at: string;
	updated_at: string;
	author_association: string;
}

export interface CommentRec {
	id: number;
	body: string;
	user: string;
	createdAt: string;
	updatedAt: string;
}

/** GitHub's `author_association`: how the author relates to the repository. */
export type Association = "OWNER" | "MEMBER" | "COLLABORATOR" | "CONTRIBUTOR" | "NONE";

export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";

export interface ReviewRec {
	id: number;
	user: string;
	state: ReviewState;
	body: string;
	commitId: string;
	submittedAt: string | null;
}

export interface ReviewCommentRec {
	id: number;
	reviewId: number;
	path: string;
	line: number | null;
	originalLine: number;
	side: "LEFT" | "RIGHT";
	diffHunk: string;
	body: string;
	user: string;
	inReplyToId?: number;
	commitId: string;
	createdAt: string;
	updatedAt: string;
}

export interface GitHubReview {
	id: number;
	node_id: string;
	user: GitHubUser;
	body: string;
	state: ReviewState;
	html_url: string;
	pull_request_url: string;
	author_association: string;
	_links: { html: { href: string }; pull_request: { href: string } };
	submitted_at?: string;
	commit_id: string;
}

export interface GitHubReviewComment {
	url: string;
	pull_request_review_id: number;
	id: number;
	node_id: string;
	diff_hunk: string;
	path: string;
	position: number | null;
	original_position: number;
	commit_id: string;
	original_commit_id: string;
	in_reply_to_id?: number;
	user: GitHubUser;
	body: string;
	created_at: string;
	updated_at: string;
	html_url: string;
	pull_request_url: string;
	author_association: string;
	_links: { self: { href: string }; html: { href: string }; pull_request: { href: string } };
	start_line: number | null;
	original_start_line: number | null;
	start_side: "LEFT" | "RIGHT" | null;
	line: number | null;
	original_line: number;
	side: "LEFT" | "RIGHT";
	subject_type: "line";
}

// ---------------------------------------------------------------- checks and Actions

export type CheckStatus =
	| "queued"
	| "in_progress"
	| "completed"
	| "waiting"
	| "requested"
	| "pending";

export interface AnnotationSpec {
	path: string;
	start_line: number;
	end_line?: number;
	annotation_level?: "notice" | "warning" | "failure";
	message: string;
	title?: string;
	raw_details?: string;
}

/** One check of a commit, as a test sets it (GitHubDouble.setChecks). */
/** A review as a test submits it (GitHubDouble.addReview). */
export interface ReviewInput {
	user: string;
	state: ReviewState;
	body?: string;
	/**
	 * Inline comments: `path` and `line` (of the pull request's head, or the base with side LEFT)
	 * start a thread; `in_reply_to` (a review comment's id) answers one instead.
	 */
	comments?: {
		path?: string;
		line?: number;
		side?: "LEFT" | "RIGHT";
		body: string;
		in_reply_to?: number;
	}[];
}

export interface CheckSpec {
	name: string;
	/** Defaults to `completed`. */
	status?: CheckStatus;
	/** Defaults to `success` once completed; always null before. */
	conclusion?: string | null;
	/** The app's slug (default `github-actions`, whose runs are Actions jobs of the same id). */
	app?: string;
	/** Actions: the workflow (default "CI"); each workflow is one check suite and one workflow run. */
	workflow?: string;
	output?: { title?: string; summary?: string; text?: string };
	annotations?: AnnotationSpec[];
	/** Actions: the job's log. Without one the log endpoint answers 404, as for an expired log. */
	log?: string;
	/** Other apps: where the check's details live (Actions: the job's page). */
	details_url?: string;
}

export interface CheckSuiteRec {
	id: number;
	sha: string;
	branch: string | null;
	app: string;
	/** Actions: the workflow's name and its workflow run. */
	workflow?: string;
	workflowRunId?: number;
	runNumber: number;
	/** A suite the app has not started any run in yet. */
	empty: boolean;
	createdAt: string;
	updatedAt: string;
}

export interface CheckRunRec {
	id: number;
	suiteId: number;
	sha: string;
	name: string;
	status: CheckStatus;
	conclusion: string | null;
	app: string;
	output: { title: string | null; summary: string | null; text: string | null };
	annotations: AnnotationSpec[];
	log?: string;
	detailsUrl?: string;
	startedAt: string;
	completedAt: string | null;
}

export interface CommitChecksRec {
	suites: CheckSuiteRec[];
	runs: CheckRunRec[];
}

export interface GitHubApp {
	id: number;
	slug: string;
	node_id: string;
	owner: GitHubUser;
	name: string;
	description: string;
	external_url: string;
	html_url: string;
	created_at: string;
	updated_at: string;
	permissions: Record<string, string>;
	events: string[];
}

export interface GitHubCheckSuite {
	id: number;
	node_id: string;
	head_branch: string | null;
	head_sha: string;
	status: string;
	conclusion: string | null;
	url: string;
	before: string | null;
	after: string;
	pull_requests: unknown[];
	app: GitHubApp;
	repository: GitHubRepo;
	created_at: string;
	updated_at: string;
	rerequestable: boolean;
	runs_rerequestable: boolean;
	latest_check_runs_count: number;
	check_runs_url: string;
}

export interface GitHubCheckRun {
	id: number;
	node_id: string;
	head_sha: string;
	external_id: string;
	url: string;
	html_url: string;
	details_url: string;
	status: string;
	conclusion: string | null;
	started_at: string;
	completed_at: string | null;
	output: {
		title: string | null;
		summary: string | null;
		text: string | null;
		annotations_count: number;
		annotations_url: string;
	};
	name: string;
	check_suite: { id: number };
	app: GitHubApp;
	pull_requests: unknown[];
}

export interface GitHubAnnotation {
	path: string;
	blob_href: string;
	start_line: number;
	end_line: number;
	start_column: number | null;
	end_column: number | null;
	annotation_level: string;
	title: string | null;
	message: string;
	raw_details: string | null;
}

export interface GitHubJob {
	id: number;
	run_id: number;
	run_url: string;
	run_attempt: number;
	node_id: string;
	head_sha: string;
	head_branch: string | null;
	url: string;
	html_url: string;
	status: string;
	conclusion: string | null;
	created_at: string;
	started_at: string;
	completed_at: string | null;
	name: string;
	steps: unknown[];
	check_run_url: string;
	labels: string[];
	runner_id: number | null;
	runner_name: string | null;
	runner_group_id: number | null;
	runner_group_name: string | null;
	workflow_name: string;
}

export interface GitHubWorkflowRun {
	id: number;
	name: string;
	node_id: string;
	check_suite_id: number;
	check_suite_node_id: string;
	head_branch: string | null;
	head_sha: string;
	path: string;
	display_title: string;
	run_number: number;
	run_attempt: number;
	event: string;
	status: string;
	conclusion: string | null;
	workflow_id: number;
	url: string;
	html_url: string;
	pull_requests: unknown[];
	created_at: string;
	updated_at: string;
	run_started_at: string;
	jobs_url: string;
	logs_url: string;
	check_suite_url: string;
	workflow_url: string;
	repository: GitHubRepo;
}

export interface PullRec {
	id: number;
	headRef: string;
	headSha: string;
	baseRef: string;
	baseSha: string;
	draft: boolean;
	merged: boolean;
	mergedAt: string | null;
	mergedBy: string | null;
	mergeCommitSha: string | null;
	maintainerCanModify: boolean;
	commits: number;
	requestedReviewers: string[];
	reviews: ReviewRec[];
	reviewComments: ReviewCommentRec[];
}

export interface IssueRec {
	id: number;
	number: number;
	title: string;
	body: string | null;
	state: "open" | "closed";
	stateReason: string | null;
	labels: string[];
	assignees: string[];
	user: string;
	createdAt: string;
	updatedAt: string;
	closedAt: string | null;
	closedBy: string | null;
	comments: CommentRec[];
	pull?: PullRec;
	/** Ids (not numbers) of its sub-issues, in the order they were added. */
	subIssues: number[];
	/** Ids of the issues it is blocked by. */
	blockedBy: number[];
}

export interface LabelRec {
	id: number;
	name: string;
	color: string;
	description: string | null;
}

export interface RepoRec {
	id: number;
	owner: string;
	name: string;
	fullName: string;
	gitDir: string;
	defaultBranch: string;
	nextNumber: number;
	issues: Map<number, IssueRec>;
	labels: LabelRec[];
	/** Lower-cased login → MEMBER or COLLABORATOR (the owner is OWNER, anyone else NONE). */
	access: Map<string, Association>;
	/** Check suites and runs by commit SHA. */
	checks: Map<string, CommitChecksRec>;
}

/** GitHub timestamps have second precision: 2011-01-26T19:01:12Z. */
export function now(): string {
	return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function nodeId(prefix: string, id: number): string {
	return `${prefix}_${Buffer.from(`0:${id}`).toString("base64url")}`;
}

// ---------------------------------------------------------------- git (argv arrays, never a shell)

function runGit(gitDir: string, args: string[]): Promise<string | undefined> {
	return new Promise((resolve) => {
		execFile("git", ["--git-dir", gitDir, ...args], { encoding: "utf8" }, (err, stdout) =>
			resolve(err ? undefined : stdout.trim()),
		);
	});
}

/** SHA of refs/heads/<branch>, or undefined when the branch does not exist. */
export async function branchSha(gitDir: string, branch: string): Promise<string | undefined> {
	if (branch === "" || branch.includes("..")) return undefined;
	return (
		(await runGit(gitDir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`])) ||
		undefined
	);
}

/** Number of commits reachable from head but not from base. */
export async function commitsBetween(gitDir: string, base: string, head: string): Promise<number> {
	const out = await runGit(gitDir, ["rev-list", "--count", `${base}..${head}`]);
	return out === undefined ? 0 : Number(out);
}

export async function readDefaultBranch(gitDir: string): Promise<string> {
	return (await runGit(gitDir, ["symbolic-ref", "--short", "HEAD"])) || "main";
}

function readDefaultBranchSync(gitDir: string): string {
	try {
		const out = execFileSync("git", ["--git-dir", gitDir, "symbolic-ref", "--short", "HEAD"], {
			encoding: "utf8",
			stdio: ["ignore", "pipe", "ignore"],
		});
		return out.trim() || "main";
	} catch {
		return "main";
	}
}

/** The commit a ref (SHA, branch or tag) names, or undefined when there is none. */
export async function commitOf(gitDir: string, ref: string): Promise<string | undefined> {
	if (ref === "" || ref.startsWith("-")) return undefined;
	return (
		(await runGit(gitDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])) || undefined
	);
}

function gitSync(gitDir: string, args: string[]): string | undefined {
	try {
		return execFileSync("git", ["--git-dir", gitDir, ...args], {
			encoding: "utf8",
			stdio: ["ignore", "pipe", "ignore"],
			maxBuffer: 16 * 1024 * 1024,
		});
	} catch {
		return undefined;
	}
}

/** The branches whose head is `sha` (a check suite's `head_branch`). */
function branchesAt(gitDir: string, sha: string): string[] {
	const out = gitSync(gitDir, [
		"for-each-ref",
		"--points-at",
		sha,
		"--format=%(refname:short)",
		"refs/heads",
	]);
	return (out ?? "").split("\n").filter(Boolean);
}

/**
 * The `diff_hunk` GitHub gives a review comment: the pull request's hunk (base...head) that holds
 * the line, from its `@@` header down to the commented line. A line outside the diff (GitHub would
 * refuse it) gets a one-line hunk of the file at head, so a test may comment anywhere.
 */
function diffHunkFor(
	gitDir: string,
	base: string,
	head: string,
	path: string,
	line: number,
	side: "LEFT" | "RIGHT",
): string {
	const diff = gitSync(gitDir, [
		"diff",
		"--no-color",
		"--no-ext-diff",
		"-U3",
		`${base}...${head}`,
		"--",
		path,
	]);
	const lines = (diff ?? "").replace(/\n$/, "").split("\n");
	for (let i = 0; i < lines.length; i++) {
		const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(lines[i] ?? "");
		if (!header) continue;
		let oldLine = Number(header[1]);
		let newLine = Number(header[2]);
		for (let j = i + 1; j < lines.length; j++) {
			const l = lines[j] ?? "";
			if (l.startsWith("@@") || l.startsWith("diff ")) break;
			// "\ No newline at end of file" belongs to neither side.
			if (l.startsWith("\\")) continue;
			const here =
				side === "LEFT"
					? !l.startsWith("+") && oldLine === line
					: !l.startsWith("-") && newLine === line;
			if (here) return lines.slice(i, j + 1).join("\n");
			if (!l.startsWith("+")) oldLine++;
			if (!l.startsWith("-")) newLine++;
		}
	}
	const text = gitSync(gitDir, ["show", `${side === "LEFT" ? base : head}:${path}`]);
	const content = text?.split("\n")[line - 1] ?? "";
	return `@@ -${line},1 +${line},1 @@\n ${content}`;
}

const CONCLUSION_ORDER = [
	"action_required",
	"startup_failure",
	"failure",
	"timed_out",
	"cancelled",
	"stale",
	"success",
	"neutral",
	"skipped",
];

export const ACTIONS_APP = "github-actions";

function uuidOf(id: number): string {
	const h = createHash("sha1").update(String(id)).digest("hex");
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

// ---------------------------------------------------------------- state

export class DoubleState {
	apiBase = "";
	readonly repos = new Map<string, RepoRec>();
	private nextId = 1_000_001;
	private readonly userIds = new Map<string, number>();
	private readonly appIds = new Map<string, number>([[ACTIONS_APP, 15368]]);
	/** Signs the log URLs the double hands out (like GitHub's short-lived blob URLs). */
	private readonly blobKey = randomBytes(16).toString("hex");

	/** GitHub Enterprise Server versions and plans without them answer these endpoints 404. */
	readonly features = { subIssues: true, dependencies: true };

	constructor(readonly login: string) {}

	id(): number {
		return this.nextId++;
	}

	addRepo(fullName: string, gitDir: string): RepoRec {
		const [owner, name, ...rest] = fullName.split("/");
		if (!owner || !name || rest.length > 0)
			throw new Error(`repo must be "owner/name": ${fullName}`);
		const existing = this.repos.get(fullName.toLowerCase());
		if (existing) {
			existing.gitDir = gitDir;
			existing.defaultBranch = readDefaultBranchSync(gitDir);
			return existing;
		}
		const repo: RepoRec = {
			id: this.id(),
			owner,
			name,
			fullName,
			gitDir,
			defaultBranch: readDefaultBranchSync(gitDir),
			nextNumber: 1,
			issues: new Map(),
			labels: [],
			access: new Map(),
			checks: new Map(),
		};
		this.repos.set(fullName.toLowerCase(), repo);
		return repo;
	}

	repo(owner: string, name: string): RepoRec | undefined {
		return this.repos.get(`${owner}/${name}`.toLowerCase());
	}

	mustRepo(fullName: string): RepoRec {
		const repo = this.repos.get(fullName.toLowerCase());
		if (!repo) throw new Error(`GitHub double: unknown repo ${fullName}`);
		return repo;
	}

	mustIssue(fullName: string, number: number): IssueRec {
		const issue = this.mustRepo(fullName).issues.get(number);
		if (!issue) throw new Error(`GitHub double: no issue or pull #${number} in ${fullName}`);
		return issue;
	}

	/** Finds a label case-insensitively, creating it (like GitHub does for writers) when absent. */
	ensureLabel(repo: RepoRec, name: string): LabelRec {
		const found = repo.labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
		if (found) return found;
		const label: LabelRec = { id: this.id(), name, color: "ededed", description: null };
		repo.labels.push(label);
		return label;
	}

	newIssue(
		repo: RepoRec,
		fields: { title: string; body?: string | null; labels?: string[]; user?: string },
	): IssueRec {
		const at = now();
		const labels = (fields.labels ?? []).map((l) => this.ensureLabel(repo, l).name);
		const issue: IssueRec = {
			id: this.id(),
			number: repo.nextNumber++,
			title: fields.title,
			body: fields.body ?? null,
			state: "open",
			stateReason: null,
			labels: [...new Set(labels)],
			assignees: [],
			user: fields.user ?? this.login,
			createdAt: at,
			updatedAt: at,
			closedAt: null,
			closedBy: null,
			comments: [],
			subIssues: [],
			blockedBy: [],
		};
		repo.issues.set(issue.number, issue);
		return issue;
	}

	/** An issue (not a pull request) by its id, in any repository. */
	issueById(id: number): { repo: RepoRec; issue: IssueRec } | undefined {
		for (const repo of this.repos.values())
			for (const issue of repo.issues.values())
				if (issue.id === id && !issue.pull) return { repo, issue };
		return undefined;
	}

	/** The issue whose sub-issue this is. */
	parentOf(id: number): IssueRec | undefined {
		for (const repo of this.repos.values())
			for (const issue of repo.issues.values()) if (issue.subIssues.includes(id)) return issue;
		return undefined;
	}

	setState(issue: IssueRec, state: "open" | "closed", by: string, reason?: string | null): void {
		if (issue.state === state) return;
		issue.state = state;
		issue.updatedAt = now();
		if (state === "closed") {
			issue.closedAt = issue.updatedAt;
			issue.closedBy = by;
			issue.stateReason = issue.pull ? null : (reason ?? "completed");
		} else {
			issue.closedAt = null;
			issue.closedBy = null;
			issue.stateReason = issue.pull ? null : "reopened";
		}
	}

	merge(issue: IssueRec, by: string): void {
		const pull = issue.pull;
		if (!pull) throw new Error(`#${issue.number} is not a pull request`);
		this.setState(issue, "closed", by);
		pull.merged = true;
		pull.mergedAt = issue.closedAt;
		pull.mergedBy = by;
		pull.mergeCommitSha = randomBytes(20).toString("hex");
	}

	/** Re-reads head/base SHAs of an open PR from git, as GitHub tracks pushes to its branches. */
	async refreshPull(repo: RepoRec, issue: IssueRec): Promise<void> {
		const pull = issue.pull;
		if (!pull || issue.state !== "open") return;
		const [head, base] = await Promise.all([
			branchSha(repo.gitDir, pull.headRef),
			branchSha(repo.gitDir, pull.baseRef),
		]);
		if (head) pull.headSha = head;
		if (base) pull.baseSha = base;
		if (head && base) pull.commits = await commitsBetween(repo.gitDir, base, head);
	}

	// ------------------------------------------------------------ serialisers

	user(login: string): GitHubUser {
		let id = this.userIds.get(login);
		if (id === undefined) {
			id = 100_001 + this.userIds.size;
			this.userIds.set(login, id);
		}
		return {
			login,
			id,
			node_id: nodeId("U", id),
			avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
			html_url: `${WEB}/${login.replace(/\[bot\]$/, "")}`,
			url: `${this.apiBase}/users/${encodeURIComponent(login)}`,
			type: login.endsWith("[bot]") ? "Bot" : "User",
			site_admin: false,
		};
	}

	repoJson(repo: RepoRec): GitHubRepo {
		return {
			id: repo.id,
			node_id: nodeId("R", repo.id),
			name: repo.name,
			full_name: repo.fullName,
			private: true,
			owner: this.user(repo.owner),
			html_url: `${WEB}/${repo.fullName}`,
			url: `${this.apiBase}/repos/${repo.fullName}`,
			clone_url: `${WEB}/${repo.fullName}.git`,
			default_branch: repo.defaultBranch,
			permissions: { admin: true, push: true, pull: true },
		};
	}

	labelJson(repo: RepoRec, name: string): GitHubLabel {
		const label = this.ensureLabel(repo, name);
		return {
			id: label.id,
			node_id: nodeId("LA", label.id),
			url: `${this.apiBase}/repos/${repo.fullName}/labels/${encodeURIComponent(label.name)}`,
			name: label.name,
			color: label.color,
			default: false,
			description: label.description,
		};
	}

	association(repo: RepoRec, login: string): Association {
		if (login.toLowerCase() === repo.owner.toLowerCase()) return "OWNER";
		return repo.access.get(login.toLowerCase()) ?? "NONE";
	}

	webUrl(repo: RepoRec, issue: IssueRec): string {
		return `${WEB}/${repo.fullName}/${issue.pull ? "pull" : "issues"}/${issue.number}`;
	}

	issueJson(repo: RepoRec, issue: IssueRec, detail = false): GitHubIssue {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		const assignees = issue.assignees.map((a) => this.user(a));
		const json: GitHubIssue = {
			id: issue.id,
			node_id: nodeId("I", issue.id),
			url: `${api}/issues/${issue.number}`,
			html_url: this.webUrl(repo, issue),
			comments_url: `${api}/issues/${issue.number}/comments`,
			labels_url: `${api}/issues/${issue.number}/labels{/name}`,
			number: issue.number,
			state: issue.state,
			state_reason: issue.stateReason,
			title: issue.title,
			body: issue.body,
			user: this.user(issue.user),
			labels: issue.labels.map((l) => this.labelJson(repo, l)),
			assignee: assignees[0] ?? null,
			assignees,
			locked: false,
			comments: issue.comments.length,
			created_at: issue.createdAt,
			updated_at: issue.updatedAt,
			closed_at: issue.closedAt,
			author_association: this.association(repo, issue.user),
		};
		if (detail) json.closed_by = issue.closedBy ? this.user(issue.closedBy) : null;
		if (issue.pull) {
			json.pull_request = {
				url: `${api}/pulls/${issue.number}`,
				html_url: this.webUrl(repo, issue),
				diff_url: `${this.webUrl(repo, issue)}.diff`,
				patch_url: `${this.webUrl(repo, issue)}.patch`,
				merged_at: issue.pull.mergedAt,
			};
		}
		return json;
	}

	pullJson(repo: RepoRec, issue: IssueRec, detail: boolean): GitHubPull {
		const pull = issue.pull;
		if (!pull) throw new Error(`#${issue.number} is not a pull request`);
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		const html = this.webUrl(repo, issue);
		const ref = (branch: string, sha: string): GitHubBranchRef => ({
			label: `${repo.owner}:${branch}`,
			ref: branch,
			sha,
			user: this.user(repo.owner),
			repo: this.repoJson(repo),
		});
		const json: GitHubPull = {
			id: pull.id,
			node_id: nodeId("PR", pull.id),
			url: `${api}/pulls/${issue.number}`,
			html_url: html,
			diff_url: `${html}.diff`,
			patch_url: `${html}.patch`,
			issue_url: `${api}/issues/${issue.number}`,
			comments_url: `${api}/issues/${issue.number}/comments`,
			number: issue.number,
			state: issue.state,
			locked: false,
			title: issue.title,
			body: issue.body,
			user: this.user(issue.user),
			labels: issue.labels.map((l) => this.labelJson(repo, l)),
			assignees: issue.assignees.map((a) => this.user(a)),
			requested_reviewers: pull.requestedReviewers.map((r) => this.user(r)),
			created_at: issue.createdAt,
			updated_at: issue.updatedAt,
			closed_at: issue.closedAt,
			merged_at: pull.mergedAt,
			merge_commit_sha: pull.mergeCommitSha,
			head: ref(pull.headRef, pull.headSha),
			base: ref(pull.baseRef, pull.baseSha),
			author_association: this.association(repo, issue.user),
			auto_merge: null,
			draft: pull.draft,
		};
		if (detail) {
			json.merged = pull.merged;
			json.mergeable = issue.state === "open" ? true : null;
			json.mergeable_state = issue.state === "open" ? (pull.draft ? "draft" : "clean") : "unknown";
			json.merged_by = pull.mergedBy ? this.user(pull.mergedBy) : null;
			json.comments = issue.comments.length;
			json.maintainer_can_modify = pull.maintainerCanModify;
			json.commits = pull.commits;
		}
		return json;
	}

	commentJson(repo: RepoRec, issue: IssueRec, comment: CommentRec): GitHubComment {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		return {
			id: comment.id,
			node_id: nodeId("IC", comment.id),
			url: `${api}/issues/comments/${comment.id}`,
			html_url: `${this.webUrl(repo, issue)}#issuecomment-${comment.id}`,
			issue_url: `${api}/issues/${issue.number}`,
			body: comment.body,
			user: this.user(comment.user),
			created_at: comment.createdAt,
			updated_at: comment.updatedAt,
			author_association: this.association(repo, comment.user),
		};
	}

	// ------------------------------------------------------------ reviews

	/** What a test reads is what GitHub would show now: an open pull's tips as git has them. */
	syncTips(repo: RepoRec, issue: IssueRec): void {
		if (!issue.pull || issue.state !== "open") return;
		const { head, base } = this.tips(repo, issue.pull);
		issue.pull.headSha = head;
		issue.pull.baseSha = base;
	}

	/** The pull's current head and base SHAs from git (the stored ones may predate a push). */
	private tips(repo: RepoRec, pull: PullRec): { head: string; base: string } {
		const sha = (branch: string) =>
			gitSync(repo.gitDir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`])?.trim();
		return { head: sha(pull.headRef) || pull.headSha, base: sha(pull.baseRef) || pull.baseSha };
	}

	/** The thread's first comment: replies (and replies to replies) hang from it. */
	threadRoot(pull: PullRec, commentId: number): ReviewCommentRec | undefined {
		let comment = pull.reviewComments.find((c) => c.id === commentId);
		while (comment?.inReplyToId !== undefined) {
			const parent: number = comment.inReplyToId;
			comment = pull.reviewComments.find((c) => c.id === parent);
		}
		return comment;
	}

	/** A submitted (or, with state PENDING, a pending) review and its comments. */
	addReview(
		repo: RepoRec,
		issue: IssueRec,
		spec: ReviewInput,
	): { review: ReviewRec; comments: ReviewCommentRec[] } {
		const pull = issue.pull;
		if (!pull) throw new Error(`#${issue.number} is not a pull request`);
		const at = now();
		const { head, base } = this.tips(repo, pull);
		const review: ReviewRec = {
			id: this.id(),
			user: spec.user,
			state: spec.state,
			body: spec.body ?? "",
			commitId: head,
			submittedAt: spec.state === "PENDING" ? null : at,
		};
		const comments = (spec.comments ?? []).map((c): ReviewCommentRec => {
			const root = c.in_reply_to === undefined ? undefined : this.threadRoot(pull, c.in_reply_to);
			if (c.in_reply_to !== undefined && !root)
				throw new Error(`GitHub double: no review comment ${c.in_reply_to} on #${issue.number}`);
			if (root)
				return {
					...root,
					id: this.id(),
					reviewId: review.id,
					body: c.body,
					user: spec.user,
					inReplyToId: root.id,
					createdAt: at,
					updatedAt: at,
				};
			if (!c.path || c.line === undefined)
				throw new Error("GitHub double: a review comment needs path and line");
			const side = c.side ?? "RIGHT";
			return {
				id: this.id(),
				reviewId: review.id,
				path: c.path,
				line: c.line,
				originalLine: c.line,
				side,
				diffHunk: diffHunkFor(repo.gitDir, base, head, c.path, c.line, side),
				body: c.body,
				user: spec.user,
				commitId: head,
				createdAt: at,
				updatedAt: at,
			};
		});
		pull.reviews.push(review);
		pull.reviewComments.push(...comments);
		// A submitted review answers the request for it, as on GitHub.
		if (review.submittedAt)
			pull.requestedReviewers = pull.requestedReviewers.filter(
				(r) => r.toLowerCase() !== spec.user.toLowerCase(),
			);
		issue.updatedAt = at;
		return { review, comments };
	}

	reviewJson(repo: RepoRec, issue: IssueRec, review: ReviewRec): GitHubReview {
		const html = `${this.webUrl(repo, issue)}#pullrequestreview-${review.id}`;
		const pullUrl = `${this.apiBase}/repos/${repo.fullName}/pulls/${issue.number}`;
		return {
			id: review.id,
			node_id: nodeId("PRR", review.id),
			user: this.user(review.user),
			body: review.body,
			state: review.state,
			html_url: html,
			pull_request_url: pullUrl,
			author_association: this.association(repo, review.user),
			_links: { html: { href: html }, pull_request: { href: pullUrl } },
			...(review.submittedAt ? { submitted_at: review.submittedAt } : {}),
			commit_id: review.commitId,
		};
	}

	reviewCommentJson(repo: RepoRec, issue: IssueRec, c: ReviewCommentRec): GitHubReviewComment {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		const html = `${this.webUrl(repo, issue)}#discussion_r${c.id}`;
		const pullUrl = `${api}/pulls/${issue.number}`;
		// `position` counts lines below the hunk's header (the deprecated diff position).
		const position = c.diffHunk.split("\n").length - 1;
		return {
			url: `${api}/pulls/comments/${c.id}`,
			pull_request_review_id: c.reviewId,
			id: c.id,
			node_id: nodeId("PRRC", c.id),
			diff_hunk: c.diffHunk,
			path: c.path,
			position: c.line === null ? null : position,
			original_position: position,
			commit_id: c.commitId,
			original_commit_id: c.commitId,
			...(c.inReplyToId !== undefined ? { in_reply_to_id: c.inReplyToId } : {}),
			user: this.user(c.user),
			body: c.body,
			created_at: c.createdAt,
			updated_at: c.updatedAt,
			html_url: html,
			pull_request_url: pullUrl,
			author_association: this.association(repo, c.user),
			_links: {
				self: { href: `${api}/pulls/comments/${c.id}` },
				html: { href: html },
				pull_request: { href: pullUrl },
			},
			start_line: null,
			original_start_line: null,
			start_side: null,
			line: c.line,
			original_line: c.originalLine,
			side: c.side,
			subject_type: "line",
		};
	}

	// ------------------------------------------------------------ checks and Actions

	/**
	 * Sets a commit's checks: one suite per app (per workflow for Actions), one run per check. A
	 * check already there under the same app and name keeps its id, as a run that progresses does.
	 * `queuedSuites` names apps whose suite is queued with no run yet.
	 */
	setChecks(
		repo: RepoRec,
		sha: string,
		specs: readonly CheckSpec[],
		queuedSuites: readonly string[] = [],
	): CommitChecksRec {
		const before = repo.checks.get(sha) ?? { suites: [], runs: [] };
		const at = now();
		const branch = branchesAt(repo.gitDir, sha)[0] ?? null;
		const suiteKey = (app: string, workflow?: string) =>
			app === ACTIONS_APP ? `${app}/${workflow ?? "CI"}` : app;
		const keyOf = (s: CheckSuiteRec) => suiteKey(s.app, s.workflow);
		const suites = new Map<string, CheckSuiteRec>();
		const suite = (app: string, workflow: string | undefined, empty: boolean): CheckSuiteRec => {
			const key = suiteKey(app, workflow);
			const found = suites.get(key);
			if (found) return found;
			const old = before.suites.find((s) => keyOf(s) === key);
			const actions = app === ACTIONS_APP;
			const made: CheckSuiteRec = {
				id: old?.id ?? this.id(),
				sha,
				branch,
				app,
				...(actions
					? { workflow: workflow ?? "CI", workflowRunId: old?.workflowRunId ?? this.id() }
					: {}),
				runNumber: old?.runNumber ?? before.suites.length + suites.size + 1,
				empty,
				createdAt: old?.createdAt ?? at,
				updatedAt: at,
			};
			suites.set(key, made);
			return made;
		};
		const runs = specs.map((spec): CheckRunRec => {
			const app = spec.app ?? ACTIONS_APP;
			const s = suite(app, spec.workflow, false);
			const old = before.runs.find((r) => r.suiteId === s.id && r.name === spec.name);
			const status = spec.status ?? "completed";
			const completed = status === "completed";
			return {
				id: old?.id ?? this.id(),
				suiteId: s.id,
				sha,
				name: spec.name,
				status,
				conclusion: completed ? (spec.conclusion ?? "success") : null,
				app,
				output: {
					title: spec.output?.title ?? null,
					summary: spec.output?.summary ?? null,
					text: spec.output?.text ?? null,
				},
				annotations: spec.annotations ?? [],
				...(spec.log !== undefined ? { log: spec.log } : {}),
				...(spec.details_url !== undefined ? { detailsUrl: spec.details_url } : {}),
				startedAt: old?.startedAt ?? at,
				completedAt: completed ? (old?.completedAt ?? at) : null,
			};
		});
		for (const app of queuedSuites) suite(app, undefined, true);
		const rec = { suites: [...suites.values()], runs };
		repo.checks.set(sha, rec);
		return rec;
	}

	/** Where a check run lives, by its id (or its Actions job's, the same). */
	findRun(repo: RepoRec, id: number): CheckRunRec | undefined {
		for (const rec of repo.checks.values()) {
			const run = rec.runs.find((r) => r.id === id);
			if (run) return run;
		}
		return undefined;
	}

	findSuite(repo: RepoRec, pred: (s: CheckSuiteRec) => boolean): CheckSuiteRec | undefined {
		for (const rec of repo.checks.values()) {
			const suite = rec.suites.find(pred);
			if (suite) return suite;
		}
		return undefined;
	}

	runsOf(repo: RepoRec, suite: CheckSuiteRec): CheckRunRec[] {
		return (repo.checks.get(suite.sha)?.runs ?? []).filter((r) => r.suiteId === suite.id);
	}

	/** A suite's status and conclusion, from its runs as GitHub derives them. */
	suiteOutcome(
		repo: RepoRec,
		suite: CheckSuiteRec,
	): { status: CheckStatus; conclusion: string | null } {
		const runs = this.runsOf(repo, suite);
		if (suite.empty || runs.length === 0) return { status: "queued", conclusion: null };
		if (runs.some((r) => r.status !== "completed"))
			return {
				status: runs.some((r) => r.status === "in_progress") ? "in_progress" : "queued",
				conclusion: null,
			};
		const conclusions = runs.map((r) => r.conclusion);
		return {
			status: "completed",
			conclusion: CONCLUSION_ORDER.find((c) => conclusions.includes(c)) ?? "success",
		};
	}

	appJson(slug: string): GitHubApp {
		let id = this.appIds.get(slug);
		if (id === undefined) {
			id = 200_001 + this.appIds.size;
			this.appIds.set(slug, id);
		}
		const actions = slug === ACTIONS_APP;
		const owner = actions ? "github" : slug;
		return {
			id,
			slug,
			node_id: nodeId("A", id),
			owner: this.user(owner),
			name: actions ? "GitHub Actions" : slug,
			description: actions ? "Automate your workflow from idea to production" : "",
			external_url: actions ? "https://help.github.com/en/actions" : `https://${slug}.example.com`,
			html_url: `${WEB}/apps/${slug}`,
			created_at: "2018-07-30T09:30:17Z",
			updated_at: "2019-12-10T19:04:12Z",
			permissions: { checks: "write", metadata: "read" },
			events: [],
		};
	}

	suiteJson(repo: RepoRec, suite: CheckSuiteRec): GitHubCheckSuite {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		const { status, conclusion } = this.suiteOutcome(repo, suite);
		return {
			id: suite.id,
			node_id: nodeId("CS", suite.id),
			head_branch: suite.branch,
			head_sha: suite.sha,
			status,
			conclusion,
			url: `${api}/check-suites/${suite.id}`,
			before: null,
			after: suite.sha,
			pull_requests: [],
			app: this.appJson(suite.app),
			repository: this.repoJson(repo),
			created_at: suite.createdAt,
			updated_at: suite.updatedAt,
			rerequestable: true,
			runs_rerequestable: true,
			latest_check_runs_count: this.runsOf(repo, suite).length,
			check_runs_url: `${api}/check-suites/${suite.id}/check-runs`,
		};
	}

	private jobHtml(repo: RepoRec, run: CheckRunRec): string | undefined {
		const suite = this.findSuite(repo, (s) => s.id === run.suiteId);
		return suite?.workflowRunId === undefined
			? undefined
			: `${WEB}/${repo.fullName}/actions/runs/${suite.workflowRunId}/job/${run.id}`;
	}

	runJson(repo: RepoRec, run: CheckRunRec): GitHubCheckRun {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		const html = this.jobHtml(repo, run) ?? `${WEB}/${repo.fullName}/runs/${run.id}`;
		return {
			id: run.id,
			node_id: nodeId("CR", run.id),
			head_sha: run.sha,
			// Actions puts a UUID here, another app its own id; stable, so two reads compare equal.
			external_id: run.app === ACTIONS_APP ? uuidOf(run.id) : String(run.id),
			url: `${api}/check-runs/${run.id}`,
			html_url: html,
			details_url:
				run.detailsUrl ??
				(run.app === ACTIONS_APP ? html : `https://${run.app}.example.com/builds/${run.id}`),
			status: run.status,
			conclusion: run.conclusion,
			started_at: run.startedAt,
			completed_at: run.completedAt,
			output: {
				...run.output,
				annotations_count: run.annotations.length,
				annotations_url: `${api}/check-runs/${run.id}/annotations`,
			},
			name: run.name,
			check_suite: { id: run.suiteId },
			app: this.appJson(run.app),
			pull_requests: [],
		};
	}

	annotationJson(repo: RepoRec, run: CheckRunRec, a: AnnotationSpec): GitHubAnnotation {
		return {
			path: a.path,
			blob_href: `${WEB}/${repo.fullName}/blob/${run.sha}/${a.path}`,
			start_line: a.start_line,
			end_line: a.end_line ?? a.start_line,
			start_column: null,
			end_column: null,
			annotation_level: a.annotation_level ?? "failure",
			title: a.title ?? null,
			message: a.message,
			raw_details: a.raw_details ?? null,
		};
	}

	jobJson(repo: RepoRec, run: CheckRunRec, suite: CheckSuiteRec): GitHubJob {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		return {
			id: run.id,
			run_id: suite.workflowRunId ?? 0,
			run_url: `${api}/actions/runs/${suite.workflowRunId}`,
			run_attempt: 1,
			node_id: nodeId("CR", run.id),
			head_sha: run.sha,
			head_branch: suite.branch,
			url: `${api}/actions/jobs/${run.id}`,
			html_url: this.jobHtml(repo, run) ?? "",
			status: run.status,
			conclusion: run.conclusion,
			created_at: run.startedAt,
			started_at: run.startedAt,
			completed_at: run.completedAt,
			name: run.name,
			steps: [],
			check_run_url: `${api}/check-runs/${run.id}`,
			labels: ["ubuntu-latest"],
			runner_id: 1,
			runner_name: "GitHub Actions 1",
			runner_group_id: 2,
			runner_group_name: "GitHub Actions",
			workflow_name: suite.workflow ?? "CI",
		};
	}

	workflowRunJson(repo: RepoRec, suite: CheckSuiteRec): GitHubWorkflowRun {
		const api = `${this.apiBase}/repos/${repo.fullName}`;
		const id = suite.workflowRunId ?? 0;
		const { status, conclusion } = this.suiteOutcome(repo, suite);
		const file = (suite.workflow ?? "CI").toLowerCase().replace(/[^a-z0-9]+/g, "-");
		return {
			id,
			name: suite.workflow ?? "CI",
			node_id: nodeId("WFR", id),
			check_suite_id: suite.id,
			check_suite_node_id: nodeId("CS", suite.id),
			head_branch: suite.branch,
			head_sha: suite.sha,
			path: `.github/workflows/${file}.yml`,
			display_title: suite.workflow ?? "CI",
			run_number: suite.runNumber,
			run_attempt: 1,
			event: "push",
			status,
			conclusion,
			workflow_id: repo.id,
			url: `${api}/actions/runs/${id}`,
			html_url: `${WEB}/${repo.fullName}/actions/runs/${id}`,
			pull_requests: [],
			created_at: suite.createdAt,
			updated_at: suite.updatedAt,
			run_started_at: suite.createdAt,
			jobs_url: `${api}/actions/runs/${id}/jobs`,
			logs_url: `${api}/actions/runs/${id}/logs`,
			check_suite_url: `${api}/check-suites/${suite.id}`,
			workflow_url: `${api}/actions/workflows/${repo.id}`,
			repository: this.repoJson(repo),
		};
	}

	/** The signed, token-free URL a job's log redirects to (GitHub's are blob storage URLs). */
	logUrl(repo: RepoRec, run: CheckRunRec): string {
		const path = `/_blobs/actions-results/${repo.id}/jobs/${run.id}/logs.txt`;
		return `${this.apiBase}${path}?sig=${this.sign(path)}`;
	}

	sign(path: string): string {
		return createHmac("sha256", this.blobKey).update(path).digest("hex");
	}
}
