import type { Octokit } from "octokit";
import {
	type CiFailure,
	FAILING_CONCLUSIONS,
	MAX_FOLLOW_UP_TEXT,
	type ReviewComment,
	type ReviewSummary,
} from "../../../domain/follow-up";
import { stripAnsi } from "../../../domain/printable";
import { TrackerError } from "../../tracker";
import { type GitHubAuth, githubClient } from "../app";
import { isTransientGitHubError } from "../refs";
import { type CommitChecks, type PullRequestFollowUps, pullRequestRef } from "./follow-up";
import { linkRelated } from "./related";

// The follow-up port on GitHub's REST API (docs/follow-ups.md › Follow-ups): a pull request's
// state, the failing checks of a commit with their output, annotations and log tails, reviews and
// their threads, and the answers on the pull request. What it reads is bounded here and redacted by
// the pipeline: it is untrusted text on its way into a prompt.

/** Failing checks a round shows at most. */
export const MAX_FAILURES = 10;
/** Annotations of one check at most, and the longest message of one. */
const MAX_ANNOTATIONS = 20;
const MAX_ANNOTATION_TEXT = 1000;
/** A job log's tail: its last lines, and at most this many bytes of them. */
export const LOG_TAIL_LINES = 60;
export const LOG_TAIL_BYTES = 3 * 1024;
/** The lines of a review comment's diff hunk the agent sees (the header and the commented end). */
const DIFF_HUNK_LINES = 20;

const ACTIONS = "github-actions";
const FAILING: readonly string[] = FAILING_CONCLUSIONS;

/** At most `max` characters of `text`, from its start. */
function clip(text: string, max: number): string {
	return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/**
 * The part of a job's log that says why it failed. GitHub Actions ends a failed step with an
 * `##[error]` line and then runs post-job cleanup, so the tail ends at the last error line when
 * there is one. Each line's timestamp goes: it says nothing about the failure and costs a third of
 * the budget.
 */
export function logTail(log: string): string | undefined {
	const lines = stripAnsi(log.replace(/^\uFEFF/, ""))
		.replace(/\r\n?/g, "\n")
		.split("\n")
		.map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?/, "").trimEnd());
	const lastError = lines.findLastIndex((l) => l.includes("##[error]"));
	const upTo = lastError >= 0 ? lastError + 1 : lines.length;
	const tail: string[] = [];
	let bytes = 0;
	for (let i = upTo - 1; i >= 0 && tail.length < LOG_TAIL_LINES; i--) {
		const line = lines[i] as string;
		if (tail.length === 0 && line === "") continue;
		const size = Buffer.byteLength(line) + 1;
		if (bytes + size > LOG_TAIL_BYTES) {
			// One overlong line still shows its end.
			if (tail.length === 0) tail.unshift(`…${line.slice(-(LOG_TAIL_BYTES / 2))}`);
			break;
		}
		tail.unshift(line);
		bytes += size;
	}
	const text = tail.join("\n").trim();
	return text === "" ? undefined : text;
}

/** A review comment's hunk: its `@@` header and the lines that end at the commented line. */
function hunkTail(hunk: string): string {
	const lines = hunk.split("\n");
	if (lines.length <= DIFF_HUNK_LINES) return hunk;
	return [lines[0] as string, ...lines.slice(-(DIFF_HUNK_LINES - 1))].join("\n");
}

// The generic annotation GitHub Actions puts on every failed job: it repeats the conclusion, and
// would make every failure look the same to the no-progress guard (firstErrorLines).
const EXIT_CODE = /^Process completed with exit code \d+\.?$/;

interface ApiRun {
	id: number;
	name: string;
	status: string;
	conclusion: string | null;
	html_url?: string | null;
	output: {
		title?: string | null;
		summary?: string | null;
		text?: string | null;
		annotations_count?: number;
	};
	app?: { slug?: string } | null;
}

export function gitHubFollowUps(auth: GitHubAuth, apiUrl?: string): PullRequestFollowUps {
	return followUpsOf(githubClient(auth, apiUrl));
}

/** The port over an octokit: `gitHubFollowUps` gives it Lisa's retrying, throttled client. */
export function followUpsOf(octokit: Octokit): PullRequestFollowUps {
	const target = (prUrl: string) => {
		const ref = pullRequestRef(prUrl);
		if (!ref) throw new TrackerError(`"${prUrl}" is not a GitHub pull request URL`, false);
		return { owner: ref.owner, repo: ref.repo, pull_number: ref.number };
	};
	const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
		try {
			return await run();
		} catch (err) {
			if (err instanceof TrackerError) throw err;
			throw new TrackerError(
				`GitHub: ${what} failed: ${(err as Error).message}`,
				isTransientGitHubError(err),
				{ cause: err },
			);
		}
	};

	const annotations = async (repo: { owner: string; repo: string }, run: ApiRun) => {
		if (!run.output.annotations_count) return [];
		const all = await octokit.paginate(octokit.rest.checks.listAnnotations, {
			...repo,
			check_run_id: run.id,
			per_page: 100,
		});
		return all
			.filter((a) => a.annotation_level === "failure" && !EXIT_CODE.test(a.message?.trim() ?? ""))
			.slice(0, MAX_ANNOTATIONS)
			.map((a) => {
				const message = stripAnsi(a.title ? `${a.title}: ${a.message ?? ""}` : (a.message ?? ""));
				return {
					...(a.path && a.path !== ".github" ? { path: a.path } : {}),
					...(a.start_line ? { line: a.start_line } : {}),
					message: clip(message.trim(), MAX_ANNOTATION_TEXT),
				};
			});
	};

	// Logs expire and may be missing or unreadable: the check's other parts still make the failure.
	const log = async (repo: { owner: string; repo: string }, run: ApiRun) => {
		if (run.app?.slug !== ACTIONS) return undefined;
		try {
			const { data } = await octokit.rest.actions.downloadJobLogsForWorkflowRun({
				...repo,
				job_id: run.id,
			});
			const text =
				typeof data === "string"
					? data
					: data instanceof ArrayBuffer
						? new TextDecoder().decode(data)
						: undefined;
			return text === undefined ? undefined : logTail(text);
		} catch {
			return undefined;
		}
	};

	const failure = async (
		repo: { owner: string; repo: string },
		run: ApiRun,
	): Promise<CiFailure> => {
		const { title, summary, text } = run.output;
		const output = stripAnsi([title, summary, text].filter((p) => p?.trim()).join("\n\n")).trim();
		const [found, tail] = await Promise.all([annotations(repo, run), log(repo, run)]);
		return {
			name: run.name,
			conclusion: run.conclusion ?? "",
			...(run.html_url ? { url: run.html_url } : {}),
			...(output ? { summary: clip(output, MAX_FOLLOW_UP_TEXT) } : {}),
			annotations: found,
			...(tail ? { log: tail } : {}),
		};
	};

	return {
		async state(prUrl) {
			const pr = target(prUrl);
			const { data } = await call(`reading ${prUrl}`, () => octokit.rest.pulls.get(pr));
			return {
				number: data.number,
				slug: `${pr.owner}/${pr.repo}`,
				open: data.state === "open",
				merged: data.merged === true,
				headSha: data.head.sha,
				branch: data.head.ref,
			};
		},

		async checks(prUrl, sha): Promise<CommitChecks> {
			const { owner, repo } = target(prUrl);
			const at = { owner, repo, ref: sha, per_page: 100 };
			return call(`reading the checks of ${sha.slice(0, 12)} on ${prUrl}`, async () => {
				const [suites, runs] = await Promise.all([
					octokit.paginate(octokit.rest.checks.listSuitesForRef, at),
					octokit.paginate(octokit.rest.checks.listForRef, { ...at, filter: "latest" }),
				]);
				// A suite no run was ever created in (an app with checks permission that never ran)
				// stays queued forever: it does not hold the round back.
				const started = suites.filter((x) => x.latest_check_runs_count !== 0);
				const complete = [...started, ...runs].every((x) => x.status === "completed");
				// Logs and annotations are read once the commit's checks are complete.
				if (!complete) return { complete, failures: [] };
				const failing = (runs as ApiRun[])
					.filter((r) => r.conclusion !== null && FAILING.includes(r.conclusion))
					.slice(0, MAX_FAILURES);
				const failures = await Promise.all(failing.map((r) => failure({ owner, repo }, r)));
				return { complete, failures };
			});
		},

		async reviews(prUrl, reviewIds) {
			const pr = target(prUrl);
			const reviews: ReviewSummary[] = [];
			const comments: ReviewComment[] = [];
			for (const id of reviewIds) {
				const [review, own] = await call(`reading review ${id} of ${prUrl}`, () =>
					Promise.all([
						octokit.rest.pulls.getReview({ ...pr, review_id: id }),
						octokit.paginate(octokit.rest.pulls.listCommentsForReview, {
							...pr,
							review_id: id,
							per_page: 100,
						}),
					]),
				);
				const { data } = review;
				const body = data.body?.trim();
				reviews.push({
					id: data.id,
					...(data.user?.login ? { author: data.user.login } : {}),
					state: data.state,
					...(body ? { body: clip(body, MAX_FOLLOW_UP_TEXT) } : {}),
				});
				for (const c of own) {
					// A reply belongs to its thread, which the agent answers from the first comment.
					if (c.in_reply_to_id) continue;
					const line = c.line ?? c.original_line;
					comments.push({
						id: c.id,
						...(c.path ? { path: c.path } : {}),
						...(line ? { line } : {}),
						...(c.diff_hunk ? { diffHunk: hunkTail(c.diff_hunk) } : {}),
						body: clip(c.body, MAX_FOLLOW_UP_TEXT),
						...(c.user?.login ? { author: c.user.login } : {}),
					});
				}
			}
			return { reviews, comments };
		},

		linkRelated: (prs, notes) => linkRelated(octokit, prs, notes),

		async comment(prUrl, body) {
			const { owner, repo, pull_number } = target(prUrl);
			await call(`commenting on ${prUrl}`, () =>
				octokit.rest.issues.createComment({ owner, repo, issue_number: pull_number, body }),
			);
		},

		async reply(prUrl, commentId, body) {
			const pr = target(prUrl);
			await call(`replying to review comment ${commentId} on ${prUrl}`, () =>
				octokit.rest.pulls.createReplyForReviewComment({ ...pr, comment_id: commentId, body }),
			);
		},

		async requestReviewers(prUrl, logins) {
			const pr = target(prUrl);
			if (logins.length === 0) return;
			await call(`requesting reviews from ${logins.join(", ")} on ${prUrl}`, () =>
				octokit.rest.pulls.requestReviewers({ ...pr, reviewers: [...logins] }),
			);
		},
	};
}
