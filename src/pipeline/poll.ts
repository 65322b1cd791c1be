import type { LisaConfig } from "../config/schema";
import { holdsIssue } from "../domain/issue-lock";
import { issueQuery, workflowStates } from "../domain/workflow";
import type { TrackerIssue } from "../integrations/tracker";
import type { PipelineDeps } from "./deps";

// Polling mode (the original CLI's loop): find the next labelled issue in pick_from and request a
// run through the same intake queue a webhook uses; return orphaned issues to pick_from.

export type PollDeps = Pick<PipelineDeps, "store" | "queue" | "tracker" | "now" | "log"> & {
	newRunId(): string;
};

/**
 * The id of the run that owns the issue, if one does: an active run, or a finished one still
 * updating the tracker (it moves the issue itself; a new run would wait for it).
 */
async function ownerOf(
	deps: PollDeps,
	source: string,
	issueId: string,
): Promise<string | undefined> {
	const holder = await deps.store.issueLockHolder(source, issueId);
	if (!holder) return undefined;
	const run = await deps.store.getRun(holder);
	return holdsIssue(run, deps.now()) ? holder : undefined;
}

/**
 * Issues left in `in_progress` (with the label) by a run that no longer owns them go back to
 * `pick_from`, so they are picked again. Issues a run works on or still finishes are left alone.
 */
export async function recoverOrphans(deps: PollDeps, config: LisaConfig): Promise<TrackerIssue[]> {
	const sc = config.source_config;
	const tracker = deps.tracker(config.source);
	const recovered: TrackerIssue[] = [];
	for (const issue of await tracker.nextIssues(issueQuery(sc, sc.in_progress))) {
		if (await ownerOf(deps, config.source, issue.id)) continue;
		await tracker.moveTo(issue.id, sc.pick_from, workflowStates(sc));
		recovered.push(issue);
	}
	return recovered;
}

/** The next labelled issue in pick_from that no run owns. */
export async function nextIssue(
	deps: PollDeps,
	config: LisaConfig,
): Promise<TrackerIssue | undefined> {
	const candidates = await deps.tracker(config.source).nextIssues(issueQuery(config.source_config));
	for (const issue of candidates) if (!(await ownerOf(deps, config.source, issue.id))) return issue;
	return undefined;
}
