import { prUrls, type Run } from "../domain/run";
import { workflowStates } from "../domain/workflow";
import { NotConfigured, TrackerError } from "../integrations/tracker";
import { epicAdvance, type PullRequestClosedMessage } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { currentEpic } from "./epic-final";
import { mutate, note } from "./mutate";
import { recordProgress } from "./report";

/**
 * `pr.closed`: one of the run's pull requests was merged or closed unmerged. Recorded on the run
 * and, merged, counted in the stats of the day the run was created. Once every PR of a succeeded
 * run is merged, the issue moves to `source_config.merged` (if set).
 */
export async function handlePullRequestClosed(
	deps: PipelineDeps,
	msg: PullRequestClosedMessage,
): Promise<void> {
	const res = await mutate(deps, msg.runId, (run) => {
		const closed = run.closedPullRequests ?? [];
		if (closed.some((p) => p.url === msg.prUrl)) return {};
		const record = {
			url: msg.prUrl,
			merged: msg.merged,
			at: msg.at,
			...(msg.by ? { by: msg.by } : {}),
			...(msg.mergeCommitSha ? { mergeCommitSha: msg.mergeCommitSha } : {}),
		};
		return { patch: { set: { closedPullRequests: [...closed, record] } } };
	});
	if (!res) {
		deps.log.warn({ runId: msg.runId }, "pull request report for an unknown run ignored");
		return;
	}
	// Counted whenever the run says it merged, so a redelivery repairs a count a crash cut off.
	if (res.run.closedPullRequests?.some((p) => p.url === msg.prUrl && p.merged))
		await deps.store.countMerge(res.run, msg.prUrl);
	if (res.changed)
		await note(
			deps,
			msg.runId,
			msg.merged ? "pr.merged" : "pr.closed",
			`${msg.prUrl} ${msg.merged ? "merged" : "closed without merging"}${msg.by ? ` by ${msg.by}` : ""}`,
			{ data: { prUrl: msg.prUrl, mergeCommitSha: msg.mergeCommitSha } },
		);
	await followMerge(deps, res.run);
	// An epic's task is done once its pull requests merged (docs/epics.md › Epics): its epic goes on.
	const task = res.run.epicTask;
	if (task && res.changed)
		await deps.queue.send(
			"events",
			epicAdvance({
				runId: await currentEpic(deps, task.runId),
				why: `task ${task.taskId}: ${msg.prUrl} ${msg.merged ? "merged" : "closed"}`.slice(0, 300),
			}),
		);
}

async function followMerge(deps: PipelineDeps, run: Run): Promise<void> {
	const sc = run.config?.source_config;
	if (!sc?.merged || !run.issue || run.status !== "succeeded") return;
	if (run.tracker.merged || run.tracker.skip) return;
	const merged = new Set((run.closedPullRequests ?? []).filter((p) => p.merged).map((p) => p.url));
	const prs = prUrls(run);
	if (!prs.length || !prs.every((u) => merged.has(u))) return;
	try {
		await deps.tracker(run.source).moveTo(run.issue.id, sc.merged, workflowStates(sc));
		await note(deps, run.runId, "tracker.moved", `issue moved to "${sc.merged}" (merged)`);
	} catch (err) {
		if (err instanceof TrackerError && err.transient) throw err;
		if (!(err instanceof TrackerError || err instanceof NotConfigured)) throw err;
		await note(deps, run.runId, "tracker.error", err.message);
	}
	await recordProgress(deps, run.runId, { merged: true });
}
