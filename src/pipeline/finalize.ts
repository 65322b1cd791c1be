import { cancelledComment, failureComment, runMarker, successComment } from "../domain/comments";
import { failPatch, tasksToStop } from "../domain/progress";
import {
	defuseMentions,
	roundIssueLine,
	roundPrComment,
	roundReportOf,
} from "../domain/round-comments";
import { prUrls, type Run, type TrackerProgress } from "../domain/run";
import { finalActivity } from "../domain/session-activity";
import { isTerminalRun } from "../domain/states";
import { labelToRemove, workflowStates } from "../domain/workflow";
import { NotConfigured, type Tracker, TrackerError } from "../integrations/tracker";
import { requestAgain } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { epicEffects, settleEpicLinks, type TrackerEffect } from "./epic-final";
import { mutate, note } from "./mutate";
import { recordProgress } from "./report";

type Effect = keyof TrackerProgress;

/**
 * Stops the tasks of the steps cancelled with the run, counts it in its day's stats, then tells
 * the tracker how the run ended: status, PR links, label, comment. Each effect is recorded on the
 * run once done, so a redelivered message or the sweeper resumes where a crash stopped. Transient
 * tracker errors throw (to be retried); permanent ones are noted on the run.
 */
export async function finalize(deps: PipelineDeps, runId: string): Promise<void> {
	let run = await deps.store.getRun(runId);
	if (!run || !isTerminalRun(run.status) || run.tracker.done) return;
	if (!run.tracker.tasksStopped) run = await stopTasks(deps, run);
	// Before the tracker's effects, which may keep failing: the stats count the run meanwhile.
	if (!run.tracker.counted) {
		await deps.store.countRun(run);
		run = (await recordProgress(deps, runId, { counted: true })) ?? run;
	}

	const effects = plannedEffects(run, deps);
	let tracker: Tracker | undefined;
	try {
		tracker = effects.length ? deps.tracker(run.source) : undefined;
	} catch (err) {
		if (!(err instanceof NotConfigured)) throw err;
		await note(deps, runId, "tracker.error", `tracker not updated: ${err.message}`);
	}

	// Pull request effects need GitHub, not the tracker: they are done either way.
	const planned: [Effect, ((r: Run) => Promise<unknown>) | undefined][] = [
		...pullRequestEffects(run, deps),
		...effects.map(([effect, perform]): [Effect, ((r: Run) => Promise<unknown>) | undefined] => [
			effect,
			tracker && ((r: Run) => perform(tracker, r)),
		]),
	];
	for (const [effect, perform] of planned) {
		if (run.tracker[effect] || !perform) continue;
		try {
			await perform(run);
		} catch (err) {
			if (err instanceof TrackerError && err.transient) throw err;
			await note(deps, runId, "tracker.error", (err as Error).message);
		}
		run = (await recordProgress(deps, runId, { [effect]: true })) ?? run;
	}
	if (run.issueId) await deps.store.releaseIssueLock(run.source, run.issueId, runId);
	await releaseSlot(deps, runId);
	await settleEpicLinks(deps, run);
	await recordProgress(deps, runId, { done: true });
}

/**
 * Fails a run Lisa cannot take further (a message that failed for good, an intake that never
 * completes), says why on its timeline, and finalizes it; a finalize that cannot finish now is left
 * to the sweeper. Nothing happens to a run that already ended.
 */
export async function failForGood(
	deps: PipelineDeps,
	runId: string,
	reason: string,
): Promise<void> {
	const now = deps.now().toISOString();
	const res = await mutate(deps, runId, (r) =>
		isTerminalRun(r.status) ? {} : { patch: failPatch(r, now, reason) },
	);
	if (!res?.changed) return;
	await note(deps, runId, "run.failed", reason);
	await finalize(deps, runId).catch((err) => {
		deps.log.warn({ err, runId }, "could not finalize a run that failed for good yet");
	});
}

/**
 * Stops the tasks of cancelled steps (a cancel, or a sibling's failure). Here rather than where the
 * run ended, so a crash in between is repaired by whatever finalizes the run next. A stop that
 * fails while the task may still run throws, to be retried.
 */
async function stopTasks(deps: PipelineDeps, run: Run): Promise<Run> {
	const tasks = tasksToStop(run);
	if (!tasks.length) return run;
	const reason = run.error ? `run ${run.status}: ${run.error}` : `run ${run.status}`;
	for (const taskId of tasks) {
		try {
			await deps.launcher.stop(taskId, reason);
		} catch (err) {
			const gone = (await deps.launcher.inspect(taskId).catch(() => undefined))?.alive === false;
			if (gone) continue;
			const why = `could not stop ${taskId}: ${(err as Error).message}`;
			await note(deps, run.runId, "task.stop_failed", why);
			throw err;
		}
	}
	return (await recordProgress(deps, run.runId, { tasksStopped: true })) ?? run;
}

/** Gives the run's slot back and wakes the oldest queued run, which may be waiting for one. */
export async function releaseSlot(deps: PipelineDeps, runId: string): Promise<void> {
	await deps.store.releaseRunSlot(runId);
	const [next] = await deps.store.runsByStatus("queued", { before: deps.now().toISOString() }, 1);
	if (next) await redrive(deps, next);
}

/** Sends a queued run's request again (idempotent: the intake resumes the same run). */
export async function redrive(deps: PipelineDeps, run: Run): Promise<void> {
	await deps.queue.send(
		"intake",
		requestAgain(run, {
			trigger: run.trigger,
			deliveryId: run.deliveryId,
			requestedAt: run.createdAt,
			runId: run.runId,
			...(run.agentSessionId ? { agentSessionId: run.agentSessionId } : {}),
		}),
	);
}

function plannedEffects(run: Run, deps: PipelineDeps): TrackerEffect[] {
	if (run.round) return roundEffects(run, deps);
	const effects =
		run.issue && !run.tracker.skip ? (epicEffects(run, deps) ?? issueEffects(run, deps)) : [];
	// A session run answers in its session whatever happened to the issue (even a lost lock race).
	const sessionId = run.agentSessionId;
	if (sessionId && !run.tracker.untouched)
		effects.push([
			"sessionFinal",
			async (t, r) => {
				await t.sessions?.activity(sessionId, finalActivity(r, deps.runUrl(r.runId)));
			},
		]);
	return effects;
}

/** The issue's status, PR links, label and comment (a session run answers in the session instead). */
function issueEffects(run: Run, deps: PipelineDeps): TrackerEffect[] {
	const sc = run.config?.source_config;
	const workflow = sc ? workflowStates(sc) : [];
	const inSession = run.agentSessionId !== undefined;
	const commentsOn = !inSession && (run.config?.comments.enabled ?? true);
	const url = deps.runUrl(run.runId);
	const id = run.issue?.id ?? run.issueId;
	const effects: TrackerEffect[] = [];

	if (run.status === "succeeded") {
		if (sc) effects.push(["finalStatus", (t) => t.moveTo(id, sc.done, workflow)]);
		effects.push(["links", attachLinks]);
		const label = sc && labelToRemove(sc);
		if (label) effects.push(["labelRemoved", (t) => t.removeLabel(id, label)]);
		if (commentsOn) effects.push(["finalComment", (t, r) => t.comment(id, successComment(r, url))]);
		return effects;
	}
	// Failed or cancelled: give the issue back to the queue it came from, and say why.
	const returnTo = sc && run.tracker.started ? sc.pick_from : undefined;
	if (returnTo) effects.push(["finalStatus", (t) => t.moveTo(id, returnTo, workflow)]);
	if (prUrls(run).length) effects.push(["links", attachLinks]);
	// Failures are always reported (in the session for a session run).
	if (commentsOn || (run.status === "failed" && !inSession))
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
	const m = url.match(/([^/]+\/[^/]+)\/pull\/(\d+)/);
	return m ? `Pull request ${m[1]}#${m[2]}` : "Pull request";
}

/**
 * A follow-up round's one line in the tracker (docs/follow-ups.md › Follow-ups): a comment on the
 * issue, or an activity in the Linear session. The issue stays where it is.
 */
function roundEffects(run: Run, deps: PipelineDeps): TrackerEffect[] {
	const line = roundIssueLine(run, deps.runUrl(run.runId));
	if (!line || run.tracker.skip) return [];
	const sessionId = run.agentSessionId;
	if (sessionId)
		return [
			[
				"sessionFinal",
				async (t) => {
					await t.sessions?.activity(sessionId, {
						type: run.status === "failed" ? "error" : "response",
						body: line,
					});
				},
			],
		];
	const commentsOn = run.config?.comments.enabled ?? true;
	if (!commentsOn && run.status !== "failed") return [];
	return [["finalComment", (t, r) => t.comment(r.issue?.id ?? r.issueId, line)]];
}

/**
 * What a round says on its pull request: one comment summarising the round, a reply in each review
 * thread it answered, and its reviewers asked again. GitHub failures are noted on the run, never
 * retried into a second comment, except a transient one before anything was posted.
 */
function pullRequestEffects(run: Run, deps: PipelineDeps): [Effect, (r: Run) => Promise<void>][] {
	const round = run.round;
	if (!round || run.tracker.untouched) return [];
	const comment = roundPrComment(run, deps.runUrl(run.runId));
	const report = roundReportOf(run);
	const effects: [Effect, (r: Run) => Promise<void>][] = [];
	if (comment)
		effects.push([
			"roundComment",
			async (r) => {
				await deps.pulls().comment(round.prUrl, comment);
				await note(deps, r.runId, "pr.commented", `commented on ${round.prUrl}`);
			},
		]);
	if (run.status !== "succeeded") return effects;
	const threads = new Set((round.comments ?? []).map((c) => c.id));
	const replies = (report?.replies ?? []).filter((r) => threads.has(r.commentId));
	if (replies.length)
		effects.push([
			"replies",
			async (r) => {
				const failed: string[] = [];
				for (const reply of replies)
					await deps
						.pulls()
						.reply(
							round.prUrl,
							reply.commentId,
							`${defuseMentions(reply.body)}\n\n${runMarker(r.runId)}`,
						)
						.catch((err) => failed.push(`${reply.commentId}: ${(err as Error).message}`));
				await note(
					deps,
					r.runId,
					"pr.commented",
					`replied in ${replies.length - failed.length} of ${replies.length} review threads${failed.length ? `; failed: ${failed.join("; ")}` : ""}`,
				);
			},
		]);
	const reviewers = [
		...new Set(
			(round.reviews ?? []).flatMap((r) =>
				r.author && !/\[bot\]$/i.test(r.author) ? [r.author] : [],
			),
		),
	];
	if (reviewers.length && !report?.noChange)
		effects.push([
			"reviewRequested",
			async (r) => {
				await deps.pulls().requestReviewers(round.prUrl, reviewers);
				await note(deps, r.runId, "pr.commented", `asked ${reviewers.join(", ")} to review again`);
			},
		]);
	return effects;
}
