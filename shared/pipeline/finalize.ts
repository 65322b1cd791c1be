import { cancelledComment, failureComment, successComment } from "../domain/comments";
import { prUrls, type Run, type TrackerProgress } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import { NotConfigured, type Tracker, TrackerError } from "../trackers/tracker";
import type { PipelineDeps } from "./deps";
import { mutate, note } from "./mutate";

type Effect = keyof TrackerProgress;

/**
 * Tells the tracker how a finished run ended: status, PR links, label, comment. Each effect is
 * recorded on the run once done, so a redelivered message or the sweeper resumes where a crash
 * stopped. Transient tracker errors throw (to be retried); permanent ones are noted on the run.
 */
export async function finalize(deps: PipelineDeps, runId: string): Promise<void> {
	let run = await deps.store.getRun(runId);
	if (!run || !isTerminalRun(run.status) || run.tracker.done) return;

	const effects = plannedEffects(run, deps);
	let tracker: Tracker | undefined;
	try {
		tracker = effects.length ? deps.tracker(run.source) : undefined;
	} catch (err) {
		if (!(err instanceof NotConfigured)) throw err;
		await note(deps, runId, "tracker.error", `tracker not updated: ${err.message}`);
	}

	for (const [effect, perform] of effects) {
		if (run.tracker[effect] || !tracker) continue;
		try {
			await perform(tracker, run);
		} catch (err) {
			if (err instanceof TrackerError && err.transient) throw err;
			await note(deps, runId, "tracker.error", (err as Error).message);
		}
		run = (await record(deps, runId, { [effect]: true })) ?? run;
	}
	await record(deps, runId, { done: true });
	if (run.issueId) await deps.store.releaseIssueLock(run.source, run.issueId, runId);
}

async function record(deps: PipelineDeps, runId: string, progress: TrackerProgress) {
	const res = await mutate(deps, runId, (r) => ({
		patch: { set: { tracker: { ...r.tracker, ...progress } } },
	}));
	return res?.run;
}

function plannedEffects(
	run: Run,
	deps: PipelineDeps,
): [Effect, (t: Tracker, r: Run) => Promise<void>][] {
	// No issue fetched (or the run lost an issue-lock race): nothing in the tracker to update.
	if (!run.issue || run.tracker.skip) return [];
	const sc = run.config?.source_config;
	const commentsOn = run.config?.comments.enabled ?? true;
	const url = deps.runUrl(run.runId);
	const id = run.issue.id;
	const effects: [Effect, (t: Tracker, r: Run) => Promise<void>][] = [];

	if (run.status === "succeeded") {
		if (sc) effects.push(["finalStatus", (t) => t.moveTo(id, sc.done)]);
		effects.push(["links", attachLinks]);
		const label = sc && (sc.remove_label === true ? sc.label : sc.remove_label || undefined);
		if (label) effects.push(["labelRemoved", (t) => t.removeLabel(id, label)]);
		if (commentsOn) effects.push(["finalComment", (t, r) => t.comment(id, successComment(r, url))]);
		return effects;
	}
	// Failed or cancelled: give the issue back to the queue it came from, and say why.
	const returnTo = sc && run.tracker.started ? sc.pick_from : undefined;
	if (returnTo) effects.push(["finalStatus", (t) => t.moveTo(id, returnTo)]);
	if (prUrls(run).length) effects.push(["links", attachLinks]);
	if (commentsOn || run.status === "failed")
		effects.push([
			"finalComment",
			(t, r) =>
				t.comment(
					id,
					r.status === "failed" ? failureComment(r, url, returnTo) : cancelledComment(r, url),
				),
		]);
	return effects;
}

async function attachLinks(t: Tracker, run: Run): Promise<void> {
	const id = run.issue?.id ?? run.issueId;
	for (const pr of prUrls(run)) await t.attachLink(id, pr, pullRequestTitle(pr));
}

function pullRequestTitle(url: string): string {
	const m =
		url.match(/github\.com\/([^/]+\/[^/]+)\/pull\/(\d+)/) ??
		url.match(/([^/]+\/[^/]+)\/pull\/(\d+)/);
	return m ? `Pull request ${m[1]}#${m[2]}` : "Pull request";
}
