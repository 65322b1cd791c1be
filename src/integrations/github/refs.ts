import { isTransientStatus } from "../../domain/transient";
import { TrackerError } from "../tracker";

// GitHub issue references and octokit failures, shared by the issues tracker and its epics.

export interface GitHubIssueRef {
	repo: string;
	number: number;
}

export const OPEN = "open";
export const CLOSED = "closed";

/** `owner/name#12`, `https://github.com/owner/name/issues/12`, or `#12` / `12` in `defaultRepo`. */
export function parseGitHubIssueRef(ref: string, defaultRepo?: string): GitHubIssueRef | undefined {
	const text = ref.trim();
	const url = text.match(/^https?:\/\/[^/]+\/([^/\s]+\/[^/\s]+)\/issues\/(\d+)/);
	if (url) return { repo: url[1] as string, number: Number(url[2]) };
	const full = text.match(/^([^/\s#]+\/[^/\s#]+)#(\d+)$/);
	if (full) return { repo: full[1] as string, number: Number(full[2]) };
	const bare = text.match(/^#?(\d+)$/);
	if (bare && defaultRepo) return { repo: defaultRepo, number: Number(bare[1]) };
	return undefined;
}

/** A ref with its repository's owner and name apart, as the API takes them. */
export type Ref = GitHubIssueRef & { owner: string; name: string };

export const gitHubIssueId = (ref: GitHubIssueRef) => `${ref.repo}#${ref.number}`;

/** The HTTP status of an octokit error, when it has one. */
export const statusOf = (err: unknown) => (err as { status?: number }).status;

/** An octokit failure worth trying again: no answer at all, or a transient status. */
export function isTransientGitHubError(err: unknown): boolean {
	const status = statusOf(err);
	return status === undefined || isTransientStatus(status);
}

export function failure(what: string, err: unknown): TrackerError {
	if (err instanceof TrackerError) return err;
	return new TrackerError(
		`GitHub: ${what} failed: ${(err as Error).message}`,
		isTransientGitHubError(err),
		{ cause: err },
	);
}
