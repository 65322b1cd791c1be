import { ulid } from "ulid";
import type { EpicTaskState } from "../domain/epic";
import { blockedBy, epicOutcome, readyTasks } from "../domain/epic-graph";
import {
	dependencyReport,
	epicFailure,
	subIssueBody,
	taskMarker,
	taskProgress,
} from "../domain/epic-progress";
import type { EpicRun, Run } from "../domain/run";
import { isTerminalRun, nextRunStatus } from "../domain/states";
import { NotConfigured, type Tracker, TrackerError } from "../integrations/tracker";
import { type EpicAdvance, epicAdvance, runRequested } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { epicComment, epicPatch, mutateEpic } from "./epic-final";
import { finalize, releaseSlot } from "./finalize";
import { mutate, note } from "./mutate";

// An epic's tasks (docs/epics.md › Epics): once its plan is accepted, `epic.advance` creates the
// missing sub-issues and their relations, starts the tasks whose dependencies are done as runs of
// their own, keeps the one progress comment current, and ends the epic when its tasks did. Every
// change for an epic (its plan accepted, a task's run ended, a pull request merged, the sweeper's
// pass) sends one; a pass is idempotent and one holds the epic at a time.

/**
 * A pass holding the epic longer than this crashed: the next one takes over. Well past how long the
 * events function may run (infra/config.ts).
 */
const LEASE_MS = 5 * 60_000;

/**
 * Sub-issues one pass creates at most (each a few tracker calls, GitHub's spaced a second apart):
 * the rest are the next pass's, asked for at once, so a pass stays well within its function's time.
 */
const CREATED_PER_PASS = 5;

/** `epic.advance`: one pass over the epic's tasks, again while others asked meanwhile. */
export async function handleEpicAdvance(deps: PipelineDeps, msg: EpicAdvance): Promise<void> {
	const lease = ulid();
	let run = await take(deps, msg.runId, lease);
	while (run) {
		try {
			await pass(deps, run, msg.why);
		} catch (err) {
			// Free for the redelivery at once (a crash leaves the lease to expire instead).
			await mutateEpic(deps, msg.runId, (r) =>
				r.epic.lease?.id === lease ? { patch: epicPatch(r, { lease: undefined }) } : {},
			);
			throw err;
		}
		run = await giveBack(deps, msg.runId, lease);
	}
}

/**
 * Takes the epic for one pass; when another pass holds it, asks it to go once more (it may have
 * read the tasks before this change) and returns nothing.
 */
async function take(
	deps: PipelineDeps,
	runId: string,
	lease: string,
): Promise<EpicRun | undefined> {
	const now = deps.now();
	const res = await mutateEpic(deps, runId, (r) => {
		if (!r.epic.tasks.length) return { mine: false };
		const held = r.epic.lease;
		if (held && held.id !== lease && Date.parse(held.until) > now.getTime())
			return held.again
				? { mine: false }
				: { mine: false, patch: epicPatch(r, { lease: { ...held, again: true } }) };
		const until = new Date(now.getTime() + LEASE_MS).toISOString();
		return { mine: true, patch: epicPatch(r, { lease: { id: lease, until } }) };
	});
	return res?.decision.mine ? res.run : undefined;
}

/** Ends a pass: the run again when another change came in meanwhile, else the lease is freed. */
async function giveBack(
	deps: PipelineDeps,
	runId: string,
	lease: string,
): Promise<EpicRun | undefined> {
	const until = new Date(deps.now().getTime() + LEASE_MS).toISOString();
	const res = await mutateEpic(deps, runId, (r) => {
		const held = r.epic.lease;
		if (held?.id !== lease) return { again: false };
		// An ended epic too: a task's run that ended meanwhile is written by the next pass.
		if (held.again) return { again: true, patch: epicPatch(r, { lease: { id: lease, until } }) };
		return { again: false, patch: epicPatch(r, { lease: undefined }) };
	});
	return res?.decision.again ? res.run : undefined;
}

/** One task's fields changed on the epic. */
const taskPatch = (run: EpicRun, id: string, fields: Partial<EpicTaskState>) =>
	epicPatch(run, {
		tasks: run.epic.tasks.map((t) => (t.id === id ? { ...t, ...fields } : t)),
	});

async function pass(deps: PipelineDeps, held: EpicRun, why: string): Promise<void> {
	let run = held;
	if (isTerminalRun(run.status)) return followEnded(deps, run);
	if (!run.epic.released) run = await release(deps, run);
	let tracker: Tracker;
	try {
		tracker = deps.tracker(run.source);
		run = await createSubIssues(deps, tracker, run);
		run = await relate(deps, tracker, run);
	} catch (err) {
		if (err instanceof TrackerError && err.transient) throw err;
		if (!(err instanceof TrackerError || err instanceof NotConfigured)) throw err;
		return end(deps, run, "failed", `could not create the epic's sub-issues: ${err.message}`);
	}
	// The tasks' runs, read once for the pass: where each task is, and what its dependents are told.
	const runs = await taskRuns(deps, run.epic.tasks);
	run = await refresh(deps, run, runs);
	run = await tick(deps, tracker, run);
	run = await startReady(deps, run, runs);
	// The comment says what the run holds: a tracker failure here is noted, the next pass says it.
	if (run.config?.comments.enabled ?? true)
		await epicComment(deps, tracker, run).catch(async (err) => {
			if (!(err instanceof TrackerError)) throw err;
			await note(deps, run.runId, "tracker.error", `the epic's progress comment: ${err.message}`);
		});
	const outcome = epicOutcome(run.epic.tasks);
	deps.log.info({ runId: run.runId, why, outcome }, "epic advanced");
	if (outcome === "succeeded") return end(deps, run, "succeeded");
	if (outcome === "failed") return end(deps, run, "failed", epicFailure(run.epic.tasks));
}

/**
 * An ended epic still follows its tasks' runs: a cancelled epic's tasks end after it (it asks for
 * their cancel as it ends), so each task's status is written from its run as while the epic ran, and
 * a progress comment already posted is edited to match. Nothing is created or started.
 */
async function followEnded(deps: PipelineDeps, ended: EpicRun): Promise<void> {
	const run = await refresh(deps, ended, await taskRuns(deps, ended.epic.tasks));
	await finalize(deps, run.runId);
	// Before its end was said, finalize says it with these statuses; after, the comment is edited,
	// also on a redelivery after a failed edit (an edit that changes nothing is skipped).
	const latest = await deps.store.getRun(run.runId);
	if (!latest?.epic?.comment?.id) return;
	try {
		await epicComment(deps, deps.tracker(latest.source), latest);
	} catch (err) {
		if (err instanceof NotConfigured) return;
		if (!(err instanceof TrackerError) || err.transient) throw err;
		await note(deps, run.runId, "tracker.error", `the epic's progress comment: ${err.message}`);
	}
}

/**
 * The research and plan steps ran in the epic's slot; its tasks take slots of their own, so the
 * epic gives its back (and wakes a run that waits for one).
 */
async function release(deps: PipelineDeps, run: EpicRun): Promise<EpicRun> {
	await releaseSlot(deps, run.runId);
	const res = await mutateEpic(deps, run.runId, (r) =>
		r.epic.released ? {} : { patch: epicPatch(r, { released: true }) },
	);
	return res?.run ?? run;
}

/**
 * One sub-issue per task, in the plan's order (a task's blockers exist before it). Each is marked
 * as being created, then recorded before the next: a pass that finds the mark without the record
 * looks the sub-issue up by its marker first (the last pass may have crashed after creating it), so
 * it is never created twice.
 */
async function createSubIssues(
	deps: PipelineDeps,
	tracker: Tracker,
	start: EpicRun,
): Promise<EpicRun> {
	let run = start;
	const sc = run.config?.source_config;
	const epicId = run.issue?.id ?? run.issueId;
	const origin = run.epic.origin ?? run.runId;
	let created = 0;
	for (const task of run.epic.tasks) {
		if (task.issue || !sc || !run.epic) continue;
		if (created++ === CREATED_PER_PASS) {
			await deps.queue.send(
				"events",
				epicAdvance({ runId: run.runId, why: "more sub-issues to create" }),
			);
			break;
		}
		const marker = taskMarker(origin, task.id);
		// Looked up only when a pass began creating it before: that pass may have crashed after.
		const found = task.creating ? await tracker.epics.findSubIssue(epicId, marker) : undefined;
		if (!task.creating)
			await mutateEpic(deps, run.runId, (r) =>
				r.epic.tasks.find((t) => t.id === task.id && !t.issue)
					? { patch: taskPatch(r, task.id, { creating: true }) }
					: {},
			);
		const issue =
			found ??
			(await tracker.epics.createSubIssue(epicId, {
				title: task.title,
				body: subIssueBody({ key: run.issueKey, url: run.url }, run.epic, task, origin),
				marker,
				state: sc.pick_from,
			}));
		const res = await mutateEpic(deps, run.runId, (r) =>
			r.epic.tasks.find((t) => t.id === task.id && !t.issue)
				? { patch: taskPatch(r, task.id, { issue, status: "waiting" }) }
				: {},
		);
		run = res?.run ?? run;
		await note(
			deps,
			run.runId,
			"epic.task_created",
			`task ${task.id} "${task.title}" ${found ? "found" : "created"} as ${issue.key ?? issue.url ?? issue.id}`,
			{ data: { taskId: task.id, issue, found: Boolean(found) } },
		);
	}
	return run;
}

/** Each task's blockers recorded in the tracker (Linear `blocks`, GitHub "blocked by"); once. */
async function relate(deps: PipelineDeps, tracker: Tracker, start: EpicRun): Promise<EpicRun> {
	let run = start;
	const byId = new Map(run.epic.tasks.map((t) => [t.id, t]));
	for (const task of run.epic.tasks) {
		if (task.related || !task.issue) continue;
		const blockers = task.dependsOn.map((id) => byId.get(id)?.issue);
		if (blockers.some((b) => !b)) continue;
		for (const blocker of blockers) {
			if (!blocker) continue;
			// Lisa orders the tasks itself: a relation the tracker refuses is said, not fatal.
			await tracker.epics.addBlocker(task.issue.id, blocker.id).catch(async (err) => {
				if (!(err instanceof TrackerError) || err.transient) throw err;
				await note(deps, run.runId, "tracker.error", `task ${task.id}'s blockers: ${err.message}`);
			});
		}
		const res = await mutateEpic(deps, run.runId, (r) => ({
			patch: taskPatch(r, task.id, { related: true }),
		}));
		run = res?.run ?? run;
	}
	return run;
}

/** Each task's status from its run (and its pull requests' merges); written when one moved. */
async function refresh(deps: PipelineDeps, run: EpicRun, runs: Map<string, Run>): Promise<EpicRun> {
	const followMerge = Boolean(run.config?.source_config.merged);
	const tasks = run.epic.tasks;
	const moved = tasks.map((t) => ({ ...t, ...taskProgress(t, runs.get(t.id), followMerge) }));
	const blocked = blockedBy(moved);
	const next = moved.map((t) => {
		const root = blocked.get(t.id);
		const how = moved.find((r) => r.id === root)?.status;
		return root ? { ...t, status: "blocked" as const, reason: `task ${root} ${how}` } : t;
	});
	const changed = next.filter((t, i) => JSON.stringify(t) !== JSON.stringify(tasks[i]));
	if (!changed.length) return run;
	const res = await mutateEpic(deps, run.runId, (r) => ({
		patch: epicPatch(r, {
			tasks: r.epic.tasks.map((t) => {
				const now = next.find((n) => n.id === t.id);
				return now ? { ...t, status: now.status, prUrls: now.prUrls, reason: now.reason } : t;
			}),
		}),
	}));
	for (const t of changed)
		await note(
			deps,
			run.runId,
			"epic.task_status",
			`task ${t.id}: ${t.status}${t.reason ? ` (${t.reason})` : ""}`,
			{
				data: { taskId: t.id, status: t.status, runId: t.runId },
			},
		);
	return res?.run ?? run;
}

/**
 * Where the epic lists its tasks as items (Trello's checklist on the epic card), each task done is
 * ticked once, recorded on the task. A permanent failure is noted (and marked, not tried forever);
 * a transient one throws, to be tried again.
 */
async function tick(deps: PipelineDeps, tracker: Tracker, start: EpicRun): Promise<EpicRun> {
	let run = start;
	if (!tracker.epics.checkTask) return run;
	for (const task of run.epic.tasks) {
		if (!task.issue || task.status !== "done" || task.ticked) continue;
		await tracker.epics.checkTask(run.issue?.id ?? run.issueId, task.issue).catch(async (err) => {
			if (!(err instanceof TrackerError) || err.transient) throw err;
			await note(deps, run.runId, "tracker.error", `ticking task ${task.id}: ${err.message}`);
		});
		const res = await mutateEpic(deps, run.runId, (r) => ({
			patch: taskPatch(r, task.id, { ticked: true }),
		}));
		run = res?.run ?? run;
	}
	return run;
}

async function taskRuns(
	deps: PipelineDeps,
	tasks: readonly EpicTaskState[],
): Promise<Map<string, Run>> {
	const runs = new Map<string, Run>();
	for (const t of tasks) {
		if (!t.runId) continue;
		const run = await deps.store.getRun(t.runId);
		if (run) runs.set(t.id, run);
	}
	return runs;
}

/**
 * Starts each task whose dependencies are done as a run of its own (its sub-issue, its repository,
 * its dependencies' reports). The run's id is recorded on the task before it is requested, and a
 * requested run not created yet is requested again: a crash in between starts it once.
 */
async function startReady(
	deps: PipelineDeps,
	start: EpicRun,
	runs: Map<string, Run>,
): Promise<EpicRun> {
	let run = start;
	const tasks = run.epic.tasks;
	const requested = tasks.filter((t) => t.status === "running" && t.runId && !runs.has(t.id));
	const byId = new Map(tasks.map((t) => [t.id, t]));
	for (const task of [...readyTasks(tasks), ...requested]) {
		const childId = task.runId ?? ulid();
		const res = await mutateEpic(deps, run.runId, (r) => {
			const current = r.epic.tasks.find((t) => t.id === task.id);
			if (isTerminalRun(r.status) || !current || (current.runId && current.runId !== childId))
				return { go: false };
			return current.runId
				? { go: true }
				: { go: true, patch: taskPatch(r, task.id, { runId: childId, status: "running" }) };
		});
		if (!res?.decision.go || !task.issue) continue;
		run = res.run;
		await deps.queue.send(
			"intake",
			runRequested({
				source: run.source,
				issueId: task.issue.id,
				issueKey: task.issue.key,
				trigger: "epic",
				requestedAt: deps.now().toISOString(),
				runId: childId,
				epicTask: {
					runId: run.runId,
					taskId: task.id,
					repo: task.repo,
					dependencies: task.dependsOn.flatMap((id) => {
						const dep = byId.get(id);
						return dep ? [dependencyReport(dep, runs.get(id))] : [];
					}),
				},
			}),
		);
		await note(deps, run.runId, "epic.task_started", `task ${task.id} started as run ${childId}`, {
			data: { taskId: task.id, runId: childId },
		});
	}
	return run;
}

/** The epic ends with its tasks: succeeded when all are done, else failed with what went wrong. */
async function end(
	deps: PipelineDeps,
	run: Run,
	outcome: "succeeded" | "failed",
	error?: string,
): Promise<void> {
	const now = deps.now().toISOString();
	const res = await mutate(deps, run.runId, (r) =>
		isTerminalRun(r.status)
			? {}
			: {
					patch: {
						set: {
							status: nextRunStatus(r.status, outcome === "succeeded" ? "succeed" : "fail"),
							finishedAt: now,
							error,
						},
					},
				},
	);
	if (res?.changed)
		await note(
			deps,
			run.runId,
			outcome === "succeeded" ? "run.succeeded" : "run.failed",
			outcome === "succeeded"
				? "run succeeded: every task of the epic is done"
				: `run failed: ${error}`,
		);
	await finalize(deps, run.runId);
}
