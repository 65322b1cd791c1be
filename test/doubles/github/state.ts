// In-memory state of the GitHub REST double and the JSON shapes it serialises to.
// Branch facts (existence, SHAs, commit counts, default branch) come from real bare repos via git.
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";

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

export interface GitHubBranchRef {
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

export function readDefaultBranchSync(gitDir: string): string {
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

// ---------------------------------------------------------------- state

export class DoubleState {
	apiBase = "";
	readonly repos = new Map<string, RepoRec>();
	private nextId = 1_000_001;
	private readonly userIds = new Map<string, number>();

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
		};
		repo.issues.set(issue.number, issue);
		return issue;
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

	private association(repo: RepoRec, login: string): string {
		return login.toLowerCase() === repo.owner.toLowerCase() ? "OWNER" : "CONTRIBUTOR";
	}

	private webUrl(repo: RepoRec, issue: IssueRec): string {
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
			requested_reviewers: [],
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
}
