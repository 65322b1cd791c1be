/** Which run opened a pull request: how a check, review or comment on it finds its run. */
export interface PullRequestStore {
	/** Records `url` as opened by `runId` (idempotent; the first run to record it keeps it). */
	linkPullRequest(url: string, runId: string): Promise<void>;
	runOfPullRequest(url: string): Promise<string | undefined>;
}
