import type { EpicState } from "../domain/epic";
import { epicProgressComment, needsSpecComment } from "../domain/epic-progress";
import type { EpicRun, Run, RunPatch, TrackerProgress } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import { labelToRemove, workflowStates } from "../domain/workflow";
import { type Tracker, TrackerError } from "../integrations/tracker";
import { cancelRequested, epicAdvance } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { mutate, note } from "./mutate";

// How an epic ends in the tracker, and how its tasks' runs and the epic hear of each other
// (docs/epics.md › Epics). Kept apart from the epic's pass, which finalizes through these.

/** One of an ended run's tracker effects (src/pipeline/finalize.ts): what it is recorded as, and how it is done. */
export type TrackerEffect = [keyof TrackerProgress, (t: Tracker, r: Run) => Promise<unknown>];

/** The epic's state with `fields` changed, as a run patch. */
export const epicPatch = (run: EpicRun, fields: Partial<EpicState>) => ({
	set: { epic: { ...run.epic, ...fields } },
});

/**
 * `mutate` for an epic's run: `decide` sees it as one. A run that is not an epic's decides nothing
 * and gives undefined (a run never changes its kind).
 */
export async function mutateEpic<T extends { patch?: RunPatch }>(
	deps: Pick<PipelineDeps, "store" | "now">,
	runId: string,
	decide: (run: EpicRun) => T,
): Promise<{ run: EpicRun; decision: T; changed: boolean } | undefined> {
	const res = await mutate(deps, runId, (r) => {
		if (!r.epic) return {};
		const decision = decide(r);
		return { decision, patch: decision.patch };
	});
	if (!res?.decision.decision || !res.run.epic) return undefined;
	return { run: res.run, decision: res.decision.decision, changed: res.changed };
}

/**
 * The epic issue's progress comment: posted once (claimed first, so two passes never both post),
 * then edited in place whenever its text changes. A post that fails gives its claim back and a
 * comment that can no longer be edited (deleted) is forgotten: the next pass posts it again. A
 * permanent failure is noted; a transient one throws, to be retried.
 */
export async function epicComment(deps: PipelineDeps, tracker: Tracker, run: Run): Promise<void> {
	if (!run.epic) return;
	const text = epicProgressComment(run, deps.runUrl(run.runId));
	const said = run.epic.comment;
	if (said?.text === text) return;
	const issueId = run.issue?.id ?? run.issueId;
	const record = (comment: EpicState["comment"]) =>
		mutateEpic(deps, run.runId, (r) => ({ patch: epicPatch(r, { comment }) }));
	try {
		if (said?.id) {
			await tracker.epics.editComment(issueId, said.id, text).catch(async (err) => {
				if (err instanceof TrackerError && !err.transient) await record(undefined);
				throw err;
			});
			await record({ claimed: true, id: said.id, text });
			return;
		}
		// Claimed by a pass that crashed while posting: posting again could make a second one.
		if (said?.claimed) return;
		const claimed = await mutateEpic(deps, run.runId, (r) =>
			r.epic.comment ? {} : { patch: epicPatch(r, { comment: { claimed: true } }) },
		);
		if (!claimed?.changed) return;
		const id = await tracker.comment(issueId, text).catch(async (err) => {
			await mutateEpic(deps, run.runId, (r) =>
				r.epic.comment && !r.epic.comment.id ? { patch: epicPatch(r, { comment: undefined }) } : {},
			);
			throw err;
		});
		await record({ claimed: true, id, text });
	} catch (err) {
		if (!(err instanceof TrackerError) || err.transient) throw err;
		await note(deps, run.runId, "tracker.error", `the epic's progress comment: ${err.message}`);
	}
}

/**
 * An ended epic's tracker effects, or undefined when it ended before its plan (a failed research
 * or plan is reported like any failed run). A vague epic gets the needs-spec label and its
 * questions; a planned one its progress comment, edited a last time.
 */
export function epicEffects(run: Run, deps: PipelineDeps): TrackerEffect[] | undefined {
	const config = run.config;
	if (!run.epic || !config || !run.issue) return undefined;
	const sc = config.source_config;
	const id = run.issue.id;
	const workflow = workflowStates(sc);
	const url = deps.runUrl(run.runId);
	const back: TrackerEffect[] = run.tracker.started
		? [["finalStatus", (t) => t.moveTo(id, sc.pick_from, workflow)]]
		: [];
	const questions = run.epic.research?.needsSpec;
	if (questions)
		return [
			["needsSpec", (t) => t.epics.addLabel(id, config.epic.needs_spec_label)],
			...back,
			[
				"finalComment",
				(t, r) => t.comment(id, needsSpecComment(r, questions, config.epic.needs_spec_label, url)),
			],
		];
	if (!run.epic.tasks.length) return undefined;
	const final: TrackerEffect = ["finalComment", (t, r) => epicComment(deps, t, r)];
	// How it ended is always said when it failed; its success only with comments on
	// (docs/config.md › Config).
	if (run.status !== "succeeded") return [...back, final];
	const commentsOn = config.comments.enabled;
	const label = sc.remove_label === true ? config.epic.label : labelToRemove(sc);
	return [
		// Its tasks are done: merged, when merges are followed.
		["finalStatus", (t) => t.moveTo(id, sc.merged ?? sc.done, workflow)],
		...(label ? [["labelRemoved", (t: Tracker) => t.removeLabel(id, label)] as TrackerEffect] : []),
		...(commentsOn ? [final] : []),
	];
}

/**
 * What an ended run owes its epic: a task's run tells its epic (a lost message is made up by the
 * sweeper's pass); an ended epic cancels its tasks' runs still active (a cancel is idempotent).
 */
export async function settleEpicLinks(deps: PipelineDeps, run: Run): Promise<void> {
	if (run.epicTask)
		await deps.queue.send(
			"events",
			epicAdvance({
				runId: await currentEpic(deps, run.epicTask.runId),
				why: `task ${run.epicTask.taskId}'s run ${run.status}`,
			}),
		);
	if (!run.epic) return;
	for (const task of run.epic.tasks) {
		if (!task.runId) continue;
		const child = await deps.store.getRun(task.runId);
		if (!child || isTerminalRun(child.status)) continue;
		await deps.queue.send(
			"events",
			cancelRequested({
				runId: child.runId,
				reason: `its epic's run ${run.runId} ${run.status}`,
				requestedAt: deps.now().toISOString(),
			}),
		);
	}
}

/** The epic run that now holds an epic: the last of the runs that continued `runId`. */
export async function currentEpic(deps: PipelineDeps, runId: string): Promise<string> {
	let id = runId;
	// Bounded: each continue is a person's request, and a chain never loops.
	for (let i = 0; i < 50; i++) {
		const next = (await deps.store.getRun(id))?.epic?.continuedBy;
		if (!next) return id;
		id = next;
	}
	return id;
}
