import type { Run } from "./run";
import { isTerminalRun } from "./states";

/** How long a finished run's tracker updates are retried (the sweeper's finalize window). */
export const FINALIZE_WINDOW_MS = 24 * 3600_000;

/**
 * Whether `run` still owns its issue: while it works, and once finished until its tracker updates
 * are done or given up. A new run that took the issue earlier would have its start buried under
 * the old run's late status change and comment.
 */
export function holdsIssue(run: Run | undefined, now: Date): boolean {
	if (!run) return false;
	if (!isTerminalRun(run.status)) return true;
	if (run.tracker.done) return false;
	// The sweeper retries finalize for runs updated within the window; every step of progress
	// updates the run, so its last update (not its finish) says whether it is still retried.
	return now.getTime() - Date.parse(run.updatedAt) < FINALIZE_WINDOW_MS;
}
