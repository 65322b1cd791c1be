import type { CiFailure, ReviewComment, ReviewSummary } from "../../../domain/follow-up";
import type { RelatedPr } from "./body";
import type { Notes } from "./related";

// What the pipeline asks GitHub about a run's open pull request to gather a follow-up round, and
// how it answers on the pull request afterwards (docs/follow-ups.md › Follow-ups). Errors are
// TrackerErrors (transient for 408, 429 and 5xx), like the trackers'.

interface PullRequestState {
	number: number;
	/** owner/name */
	slug: string;
	open: boolean;
	merged: boolean;
	headSha: string;
	/** The head branch's name. */
	branch: string;
}

export interface CommitChecks {
	/** Every check suite and check run of the commit has completed. */
	complete: boolean;
	/** The failing checks (conclusion failure, timed_out or startup_failure), with output, annotations and log tails. */
	failures: CiFailure[];
}

export interface PullRequestFollowUps {
	state(prUrl: string): Promise<PullRequestState>;
	checks(prUrl: string, sha: string): Promise<CommitChecks>;
	/** The reviews and their inline comments that start a thread (replies are left out). */
	reviews(
		prUrl: string,
		reviewIds: readonly number[],
	): Promise<{ reviews: ReviewSummary[]; comments: ReviewComment[] }>;
	/** A comment on the pull request's conversation. */
	comment(prUrl: string, body: string): Promise<void>;
	/** A reply in the review thread that `commentId` starts. */
	reply(prUrl: string, commentId: number, body: string): Promise<void>;
	requestReviewers(prUrl: string, logins: readonly string[]): Promise<void>;
	/** Brings each of a run's pull requests up to date with the others' links (best effort: each failure is noted). */
	linkRelated(prs: readonly RelatedPr[], notes: Notes): Promise<void>;
}

/** owner, name and number of a pull request's web URL (`https://<host>/<owner>/<name>/pull/<n>`). */
export function pullRequestRef(
	prUrl: string,
): { owner: string; repo: string; number: number } | undefined {
	const m = prUrl.match(/^https?:\/\/[^/]+\/([^/\s]+)\/([^/\s]+)\/pull\/(\d+)\/?$/);
	return m ? { owner: m[1] as string, repo: m[2] as string, number: Number(m[3]) } : undefined;
}
