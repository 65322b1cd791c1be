// GitHub webhook deliveries built from the double's state, shaped like GitHub's `issues`,
// `issue_comment`, `pull_request`, `pull_request_review`, `pull_request_review_comment`,
// `check_suite`, `check_run` and `workflow_run` events (docs: webhook-events-and-payloads), with the
// headers GitHub sends. What the double does not hold (checks, reviews, review comments) is given
// as plain parameters.
import { randomUUID } from "node:crypto";
import type { GitHubComment, GitHubDouble, GitHubIssue, GitHubPull } from "./server";
import { signGitHub } from "./server";

const user = (login: string) => ({
	login,
	id: 1000 + login.length,
	type: login.endsWith("[bot]") ? "Bot" : "User",
	html_url: `https://github.com/${login}`,
});

function repository(double: GitHubDouble, fullName: string) {
	const [owner, name] = fullName.split("/") as [string, string];
	return {
		id: 4242,
		name,
		full_name: fullName,
		private: false,
		owner: user(owner),
		html_url: `https://github.com/${fullName}`,
		url: `${double.url}/repos/${fullName}`,
		default_branch: "main",
	};
}

/** `issues` with action `labeled` (or another action): the issue as the double holds it now. */
export function issuesEvent(
	double: GitHubDouble,
	fullName: string,
	issue: GitHubIssue,
	opts: { action?: string; label?: string; sender: string },
) {
	const current = double.issues(fullName).find((i) => i.number === issue.number) ?? issue;
	return {
		action: opts.action ?? "labeled",
		issue: current,
		...(opts.label
			? { label: current.labels.find((l) => l.name === opts.label) ?? { name: opts.label } }
			: {}),
		repository: repository(double, fullName),
		sender: user(opts.sender),
	};
}

export function issueCommentEvent(
	double: GitHubDouble,
	fullName: string,
	issue: GitHubIssue,
	comment: GitHubComment,
) {
	return {
		action: "created",
		issue,
		comment,
		repository: repository(double, fullName),
		sender: comment.user,
	};
}

/** `pull_request` closed: merged when the double merged it (see GitHubDouble.mergePull). */
export function pullRequestClosedEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	sender: string,
) {
	return {
		action: "closed",
		number: pull.number,
		pull_request: pull,
		repository: repository(double, fullName),
		sender: user(sender),
	};
}

/** Ids of what the double does not hold (checks, reviews, comments): unique in a process. */
let lastId = 7_000_000;
const nextId = () => ++lastId;

const repoRef = (r: GitHubPull["base"]["repo"]) => ({ id: r.id, url: r.url, name: r.name });

/**
 * A pull request as check suites, check runs and workflow runs list it: no web URL, its head and
 * base with their repositories' API URLs.
 */
function pullRequestRef(pull: GitHubPull) {
	return {
		url: pull.url,
		id: pull.id,
		number: pull.number,
		head: { ref: pull.head.ref, sha: pull.head.sha, repo: repoRef(pull.head.repo) },
		base: { ref: pull.base.ref, sha: pull.base.sha, repo: repoRef(pull.base.repo) },
	};
}

export interface CheckEventOptions {
	/** Default "failure"; `null` while the check runs. */
	conclusion?: string | null;
	/** Default "completed". */
	action?: string;
	/** The commit checked; default the pull request's head. */
	headSha?: string;
	/** The pull requests listed (default the one given); `[]` for none, or another repository's. */
	pulls?: GitHubPull[];
	/** The check run's or the workflow's name (default "test" and "CI"). */
	name?: string;
	/** When it completed (default now). */
	at?: string;
	id?: number;
	/** Default "github-actions[bot]". */
	sender?: string;
}

function checkParts(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	o: CheckEventOptions,
) {
	const at = o.at ?? new Date().toISOString();
	const action = o.action ?? "completed";
	const conclusion = o.conclusion === undefined ? "failure" : o.conclusion;
	return {
		id: o.id ?? nextId(),
		action,
		at,
		headSha: o.headSha ?? pull.head.sha,
		common: {
			head_branch: pull.head.ref,
			head_sha: o.headSha ?? pull.head.sha,
			status: action === "completed" ? "completed" : "in_progress",
			conclusion: action === "completed" ? conclusion : null,
			pull_requests: (o.pulls ?? [pull]).map(pullRequestRef),
		},
		app: { id: 15368, slug: "github-actions", name: "GitHub Actions", owner: user("github") },
		envelope: {
			repository: repository(double, fullName),
			sender: user(o.sender ?? "github-actions[bot]"),
		},
	};
}

/** `check_suite` (default completed with a failure) of the pull request's head. */
export function checkSuiteEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	opts: CheckEventOptions = {},
) {
	const p = checkParts(double, fullName, pull, opts);
	return {
		action: p.action,
		check_suite: {
			id: p.id,
			node_id: `CS_${p.id}`,
			...p.common,
			url: `${double.url}/repos/${fullName}/check-suites/${p.id}`,
			before: pull.base.sha,
			after: p.headSha,
			app: p.app,
			created_at: p.at,
			updated_at: p.at,
			latest_check_runs_count: 1,
			check_runs_url: `${double.url}/repos/${fullName}/check-suites/${p.id}/check-runs`,
			head_commit: { id: p.headSha, tree_id: p.headSha, message: pull.title, timestamp: p.at },
		},
		...p.envelope,
	};
}

/** `check_run` (default completed with a failure) of the pull request's head. */
export function checkRunEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	opts: CheckEventOptions = {},
) {
	const p = checkParts(double, fullName, pull, opts);
	const suite = nextId();
	return {
		action: p.action,
		check_run: {
			id: p.id,
			node_id: `CR_${p.id}`,
			name: opts.name ?? "test",
			head_sha: p.headSha,
			external_id: "",
			url: `${double.url}/repos/${fullName}/check-runs/${p.id}`,
			html_url: `https://github.com/${fullName}/runs/${p.id}`,
			details_url: `https://github.com/${fullName}/actions/runs/${suite}/job/${p.id}`,
			status: p.common.status,
			conclusion: p.common.conclusion,
			started_at: p.at,
			completed_at: p.action === "completed" ? p.at : null,
			output: {
				title: p.common.conclusion === "failure" ? "1 check failed" : null,
				summary: null,
				text: null,
				annotations_count: 0,
				annotations_url: `${double.url}/repos/${fullName}/check-runs/${p.id}/annotations`,
			},
			check_suite: { id: suite, ...p.common, app: p.app, created_at: p.at, updated_at: p.at },
			app: p.app,
			pull_requests: p.common.pull_requests,
		},
		...p.envelope,
	};
}

/** `workflow_run` (default completed with a failure) of the pull request's head. */
export function workflowRunEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	opts: CheckEventOptions = {},
) {
	const p = checkParts(double, fullName, pull, opts);
	const name = opts.name ?? "CI";
	const api = `${double.url}/repos/${fullName}/actions/runs/${p.id}`;
	const workflow = {
		id: 159038,
		node_id: "W_159038",
		name,
		path: ".github/workflows/ci.yml",
		state: "active",
		url: `${double.url}/repos/${fullName}/actions/workflows/159038`,
		html_url: `https://github.com/${fullName}/blob/main/.github/workflows/ci.yml`,
	};
	return {
		action: p.action,
		workflow_run: {
			id: p.id,
			node_id: `WFR_${p.id}`,
			name,
			display_title: pull.title,
			path: workflow.path,
			run_number: 1,
			run_attempt: 1,
			event: "pull_request",
			...p.common,
			workflow_id: workflow.id,
			check_suite_id: nextId(),
			url: api,
			html_url: `https://github.com/${fullName}/actions/runs/${p.id}`,
			jobs_url: `${api}/jobs`,
			logs_url: `${api}/logs`,
			created_at: p.at,
			updated_at: p.at,
			run_started_at: p.at,
			actor: pull.user,
			triggering_actor: pull.user,
			head_commit: { id: p.headSha, tree_id: p.headSha, message: pull.title, timestamp: p.at },
			repository: p.envelope.repository,
			head_repository: p.envelope.repository,
		},
		workflow,
		...p.envelope,
	};
}

export interface ReviewOptions {
	/** The reviewer's login (a `[bot]` login is a Bot). */
	user: string;
	/** Default "changes_requested" (webhooks spell states in lower case). */
	state?: string;
	body?: string | null;
	id?: number;
	/** Default "MEMBER". */
	association?: string;
	/** Default "submitted". */
	action?: string;
	/** Default the pull request's head. */
	commitId?: string;
	/** submitted_at (default now). */
	at?: string;
}

/** `pull_request_review` submitted on the pull request. */
export function pullRequestReviewEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	review: ReviewOptions,
) {
	const id = review.id ?? nextId();
	const html = `${pull.html_url}#pullrequestreview-${id}`;
	return {
		action: review.action ?? "submitted",
		review: {
			id,
			node_id: `PRR_${id}`,
			user: user(review.user),
			body: review.body ?? null,
			commit_id: review.commitId ?? pull.head.sha,
			submitted_at: review.at ?? new Date().toISOString(),
			state: review.state ?? "changes_requested",
			html_url: html,
			pull_request_url: pull.url,
			author_association: review.association ?? "MEMBER",
			_links: { html: { href: html }, pull_request: { href: pull.url } },
		},
		pull_request: pull,
		repository: repository(double, fullName),
		sender: user(review.user),
	};
}

export interface CommentOptions {
	user: string;
	body: string;
	id?: number;
	/** Default "MEMBER". */
	association?: string;
	/** Default "created". */
	action?: string;
	/** created_at and updated_at (default now). */
	at?: string;
}

export interface ReviewCommentOptions extends CommentOptions {
	/** The review it belongs to: GitHub makes one even for a lone comment (default a new id). */
	reviewId?: number;
	path?: string;
	line?: number;
	diffHunk?: string;
	/** The thread's first comment, for a reply. */
	inReplyTo?: number;
}

/** `pull_request_review_comment` created on a line of the pull request. */
export function pullRequestReviewCommentEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	comment: ReviewCommentOptions,
) {
	const id = comment.id ?? nextId();
	const at = comment.at ?? new Date().toISOString();
	const html = `${pull.html_url}#discussion_r${id}`;
	const url = `${double.url}/repos/${fullName}/pulls/comments/${id}`;
	const line = comment.line ?? 1;
	return {
		action: comment.action ?? "created",
		comment: {
			url,
			pull_request_review_id: comment.reviewId ?? nextId(),
			id,
			node_id: `PRRC_${id}`,
			diff_hunk:
				comment.diffHunk ??
				`@@ -1,1 +1,1 @@
+changed`,
			path: comment.path ?? "README.md",
			commit_id: pull.head.sha,
			original_commit_id: pull.head.sha,
			user: user(comment.user),
			body: comment.body,
			created_at: at,
			updated_at: at,
			html_url: html,
			pull_request_url: pull.url,
			author_association: comment.association ?? "MEMBER",
			_links: { self: { href: url }, html: { href: html }, pull_request: { href: pull.url } },
			start_line: null,
			original_start_line: null,
			start_side: null,
			line,
			original_line: line,
			side: "RIGHT",
			subject_type: "line",
			...(comment.inReplyTo ? { in_reply_to_id: comment.inReplyTo } : {}),
		},
		pull_request: pull,
		repository: repository(double, fullName),
		sender: user(comment.user),
	};
}

/** `issue_comment` created on the pull request (a comment in its conversation). */
export function pullRequestCommentEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	comment: CommentOptions,
) {
	const id = comment.id ?? nextId();
	const at = comment.at ?? new Date().toISOString();
	const issueUrl = `${double.url}/repos/${fullName}/issues/${pull.number}`;
	return {
		action: comment.action ?? "created",
		issue: {
			id: pull.id,
			node_id: `I_${pull.id}`,
			url: issueUrl,
			html_url: pull.html_url,
			number: pull.number,
			state: pull.state,
			title: pull.title,
			body: pull.body,
			user: pull.user,
			labels: pull.labels,
			assignees: pull.assignees,
			locked: pull.locked,
			created_at: pull.created_at,
			updated_at: at,
			closed_at: pull.closed_at,
			author_association: pull.author_association,
			pull_request: {
				url: pull.url,
				html_url: pull.html_url,
				diff_url: pull.diff_url,
				patch_url: pull.patch_url,
				merged_at: pull.merged_at,
			},
		},
		comment: {
			id,
			node_id: `IC_${id}`,
			url: `${double.url}/repos/${fullName}/issues/comments/${id}`,
			html_url: `${pull.html_url}#issuecomment-${id}`,
			issue_url: issueUrl,
			body: comment.body,
			user: user(comment.user),
			created_at: at,
			updated_at: at,
			author_association: comment.association ?? "MEMBER",
		},
		repository: repository(double, fullName),
		sender: user(comment.user),
	};
}

/** The headers of a delivery of `body` for `event`, signed with `secret`. */
export function githubHeaders(
	body: string,
	secret: string,
	event: string,
	deliveryId: string = randomUUID(),
): Record<string, string> {
	return {
		"content-type": "application/json",
		"user-agent": "GitHub-Hookshot/test",
		"x-github-event": event,
		"x-github-delivery": deliveryId,
		"x-github-hook-id": "1",
		"x-hub-signature-256": signGitHub(body, secret),
	};
}
