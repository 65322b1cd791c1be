/**
 * The concurrency limits: at most `limits.max_concurrent_runs` active runs (slots), and one active
 * run per issue (locks). Taking and giving back are idempotent, as SQS redelivers.
 */
export interface CoordinationStore {
	/** Takes one of `max` run slots; says how many runs hold one when none is free. */
	acquireRunSlot(
		runId: string,
		max: number,
	): Promise<{ acquired: true } | { acquired: false; active: number }>;
	releaseRunSlot(runId: string): Promise<void>;
	runSlotHolders(): Promise<string[]>;
	/** Takes the issue's lock for `runId` (or from `takeOverFrom`); names the holder when taken. */
	acquireIssueLock(
		source: string,
		issueId: string,
		runId: string,
		takeOverFrom?: string,
	): Promise<{ acquired: true } | { acquired: false; holder: string }>;
	/** The run holding the issue's lock, if any (it may have finished without releasing it yet). */
	issueLockHolder(source: string, issueId: string): Promise<string | undefined>;
	releaseIssueLock(source: string, issueId: string, runId: string): Promise<void>;
}
