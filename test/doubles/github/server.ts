// A wire-faithful local double of the GitHub REST API for offline tests. Point the real octokit at
// it with `new Octokit({ auth: double.token, baseUrl: double.url })`. Branch facts (and review
// comments' diff hunks) come from real bare git repos on disk; everything else (PRs, issues,
// comments, labels, reviews, collaborators, check suites and runs, Actions jobs and their logs)
// lives in memory, set by the helpers below where GitHub's API has no way to write it.
import { createHmac } from "node:crypto";
import { serveLocal } from "../serve";
import { type AppIdentity, InstallationTokens } from "./app-auth";
import { createApp, type FailSpec, type RecordedRequest, type UnhandledRequest } from "./routes";
import {
	type CheckSpec,
	DoubleState,
	type GitHubCheckRun,
	type GitHubCheckSuite,
	type GitHubComment,
	type GitHubIssue,
	type GitHubPull,
	type GitHubReview,
	type GitHubReviewComment,
	now,
	type ReviewInput,
} from "./state";

export type {
	GitHubComment,
	GitHubIssue,
	GitHubPull,
} from "./state";

export const DEFAULT_GITHUB_TOKEN = "ghp_testtoken0123456789abcdefABCDEF0123";

export interface GitHubDoubleOptions {
	/** Token every request must carry (`token <t>` or `Bearer <t>`). */
	token?: string;
	/** Login of the authenticated user (GET /user, author of API-created issues and comments). */
	login?: string;
	/** "owner/name" → absolute path of a bare git repo. */
	repos?: Record<string, string>;
	/** Defaults to a random free port on 127.0.0.1. */
	port?: number;
	/** A GitHub App installed on some of the repositories: its JWTs mint installation tokens. */
	app?: AppIdentity;
}

export interface GitHubDouble {
	/** Base URL for octokit's `baseUrl`, e.g. http://127.0.0.1:41234 (no trailing slash). */
	readonly url: string;
	readonly token: string;
	readonly login: string;
	/** The installation tokens minted so far, and what each may do (the git host double asks too). */
	readonly installationTokens: InstallationTokens;
	/** The App the double has installed (`opts.app`): a test may change what its installation covers. */
	readonly app?: AppIdentity;
	/** Every request received, in order, including failed and unauthorised ones. */
	readonly requests: RecordedRequest[];
	/** Requests that matched no route (answered 404) — gaps in the double. */
	readonly unhandled: UnhandledRequest[];
	stop(): Promise<void>;
	addRepo(ownerRepo: string, bareRepoPath: string): void;
	/** Stored PRs in the detail shape (with `merged`), ordered by number. */
	pulls(ownerRepo: string): GitHubPull[];
	/** Stored issues, PRs included (they carry `pull_request`), ordered by number. */
	issues(ownerRepo: string): GitHubIssue[];
	comments(ownerRepo: string, number: number): GitHubComment[];
	addIssue(
		ownerRepo: string,
		issue: { title: string; body?: string; labels?: string[]; user?: string },
	): GitHubIssue;
	/** Marks a PR merged and closed; resolves to the PR (detail shape) for webhook payloads. */
	mergePull(ownerRepo: string, number: number, opts?: { mergedBy?: string }): Promise<GitHubPull>;
	/**
	 * Someone with write access: `author_association` COLLABORATOR (or MEMBER) on their issue
	 * comments, reviews and review comments, and a reviewer one may request. The repository's owner
	 * is OWNER; anyone else NONE.
	 */
	addCollaborator(ownerRepo: string, login: string, association?: "COLLABORATOR" | "MEMBER"): void;
	/** A comment by `user` on an issue or pull request's conversation. */
	addComment(
		ownerRepo: string,
		number: number,
		comment: { user: string; body: string },
	): GitHubComment;
	/**
	 * A review submitted on a pull request, with its inline comments (their `diff_hunk` comes from
	 * the pull request's diff in git). The reviewer leaves `requested_reviewers`.
	 */
	addReview(
		ownerRepo: string,
		number: number,
		review: ReviewInput,
	): { review: GitHubReview; comments: GitHubReviewComment[] };
	reviews(ownerRepo: string, number: number): GitHubReview[];
	/** Every review comment of the pull request, replies included, in the order they were made. */
	reviewComments(ownerRepo: string, number: number): GitHubReviewComment[];
	/**
	 * Sets the checks of commit `sha` (replacing what it had): one check suite per app, and per
	 * workflow for `github-actions`, whose runs are also Actions jobs (same id) of a workflow run.
	 * A check keeps its id across calls with the same app, workflow and name, so a test can move a
	 * check from in_progress to completed. `queuedSuites` adds apps' suites with no run yet.
	 */
	setChecks(
		ownerRepo: string,
		sha: string,
		checks: CheckSpec[],
		opts?: { queuedSuites?: string[] },
	): { suites: GitHubCheckSuite[]; runs: GitHubCheckRun[] };
	/**
	 * Makes the next `n` requests (of any kind, before auth) fail with the given status, body and
	 * headers. With `afterHandling` the request takes effect first and only the answer is replaced.
	 */
	failNext(n: number, spec: FailSpec): void;
	/** The sub-issues of an issue, in the order they were added. */
	subIssues(ownerRepo: string, number: number): GitHubIssue[];
	/** The issues an issue is blocked by. */
	blockedBy(ownerRepo: string, number: number): GitHubIssue[];
	/**
	 * Turns the sub-issue or dependency endpoints off (both on by default): they answer 404, as on a
	 * GitHub Enterprise Server without them.
	 */
	setFeatures(features: Partial<{ subIssues: boolean; dependencies: boolean }>): void;
}

/** The `X-Hub-Signature-256` header value GitHub sends for a webhook body. */
export function signGitHub(rawBody: string | Uint8Array, secret: string): string {
	return `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
}

export async function startGitHubDouble(opts: GitHubDoubleOptions = {}): Promise<GitHubDouble> {
	const token = opts.token ?? DEFAULT_GITHUB_TOKEN;
	const state = new DoubleState(opts.login ?? "lisa-bot");
	for (const [name, dir] of Object.entries(opts.repos ?? {})) state.addRepo(name, dir);
	const requests: RecordedRequest[] = [];
	const unhandled: UnhandledRequest[] = [];
	const failures: FailSpec[] = [];
	const installationTokens = new InstallationTokens();
	const app = createApp({
		state,
		token,
		app: opts.app,
		tokens: installationTokens,
		requests,
		unhandled,
		failures,
	});

	const { port, stop } = await serveLocal(app, opts.port);
	const url = `http://127.0.0.1:${port}`;
	state.apiBase = url;
	const related = (ids: number[]) =>
		ids.flatMap((id) => {
			const hit = state.issueById(id);
			return hit ? [state.issueJson(hit.repo, hit.issue, true)] : [];
		});

	return {
		url,
		token,
		login: state.login,
		installationTokens,
		app: opts.app,
		requests,
		unhandled,
		stop,
		addRepo: (ownerRepo, bareRepoPath) => {
			state.addRepo(ownerRepo, bareRepoPath);
		},
		pulls: (ownerRepo) => {
			const repo = state.mustRepo(ownerRepo);
			return [...repo.issues.values()]
				.filter((i) => i.pull)
				.map((i) => {
					state.syncTips(repo, i);
					return state.pullJson(repo, i, true);
				});
		},
		issues: (ownerRepo) => {
			const repo = state.mustRepo(ownerRepo);
			return [...repo.issues.values()].map((i) => state.issueJson(repo, i, true));
		},
		comments: (ownerRepo, number) => {
			const repo = state.mustRepo(ownerRepo);
			const issue = state.mustIssue(ownerRepo, number);
			return issue.comments.map((c) => state.commentJson(repo, issue, c));
		},
		addIssue: (ownerRepo, fields) => {
			const repo = state.mustRepo(ownerRepo);
			return state.issueJson(repo, state.newIssue(repo, fields), true);
		},
		mergePull: async (ownerRepo, number, mergeOpts = {}) => {
			const repo = state.mustRepo(ownerRepo);
			const issue = state.mustIssue(ownerRepo, number);
			if (!issue.pull) throw new Error(`GitHub double: #${number} is not a pull request`);
			if (issue.state !== "open") throw new Error(`GitHub double: #${number} is not open`);
			await state.refreshPull(repo, issue);
			state.merge(issue, mergeOpts.mergedBy ?? repo.owner);
			return state.pullJson(repo, issue, true);
		},
		addCollaborator: (ownerRepo, login, association = "COLLABORATOR") => {
			state.mustRepo(ownerRepo).access.set(login.toLowerCase(), association);
		},
		addComment: (ownerRepo, number, { user, body }) => {
			const repo = state.mustRepo(ownerRepo);
			const issue = state.mustIssue(ownerRepo, number);
			const at = now();
			const comment = { id: state.id(), body, user, createdAt: at, updatedAt: at };
			issue.comments.push(comment);
			issue.updatedAt = at;
			return state.commentJson(repo, issue, comment);
		},
		addReview: (ownerRepo, number, input) => {
			const repo = state.mustRepo(ownerRepo);
			const issue = state.mustIssue(ownerRepo, number);
			const { review, comments } = state.addReview(repo, issue, input);
			return {
				review: state.reviewJson(repo, issue, review),
				comments: comments.map((c) => state.reviewCommentJson(repo, issue, c)),
			};
		},
		reviews: (ownerRepo, number) => {
			const repo = state.mustRepo(ownerRepo);
			const issue = state.mustIssue(ownerRepo, number);
			return (issue.pull?.reviews ?? []).map((r) => state.reviewJson(repo, issue, r));
		},
		reviewComments: (ownerRepo, number) => {
			const repo = state.mustRepo(ownerRepo);
			const issue = state.mustIssue(ownerRepo, number);
			return (issue.pull?.reviewComments ?? []).map((c) => state.reviewCommentJson(repo, issue, c));
		},
		setChecks: (ownerRepo, sha, checks, checkOpts = {}) => {
			const repo = state.mustRepo(ownerRepo);
			const rec = state.setChecks(repo, sha, checks, checkOpts.queuedSuites);
			return {
				suites: rec.suites.map((s) => state.suiteJson(repo, s)),
				runs: rec.runs.map((r) => state.runJson(repo, r)),
			};
		},
		failNext: (n, spec) => {
			for (let i = 0; i < n; i++) failures.push(spec);
		},
		subIssues: (ownerRepo, number) => related(state.mustIssue(ownerRepo, number).subIssues),
		blockedBy: (ownerRepo, number) => related(state.mustIssue(ownerRepo, number).blockedBy),
		setFeatures: (features) => Object.assign(state.features, features),
	};
}
