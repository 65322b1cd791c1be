import { ulid } from "ulid";
import type { LisaConfig } from "../config/schema";
import { continueEpic } from "../domain/epic-continue";
import { holdsIssue } from "../domain/issue-lock";
import { cancelPatch } from "../domain/progress";
import { isEpic, whyNotQualifying, whySessionNotLive } from "../domain/qualify";
import {
	type IssueSnapshot,
	isIssueRun,
	newRun,
	newStep,
	pickRepo,
	planStep,
	type Run,
	type Step,
} from "../domain/run";
import { isTerminalRun, nextRunStatus } from "../domain/states";
import { workflowStates } from "../domain/workflow";
import { NotConfigured, TrackerError, type TrackerIssue } from "../integrations/tracker";
import { epicAdvance, type RunRequested } from "../queue/messages";
import { dailyBudgetWait, sayDailyWait } from "./budget";
import type { PipelineDeps } from "./deps";
import { currentEpic } from "./epic-final";
import { failForGood, finalize } from "./finalize";
import { mutate, note } from "./mutate";
import { acknowledgeSession, recordProgress, reportStart } from "./report";
import { claimLaunch, startTask } from "./steps";

const MAX_DESCRIPTION = 64 * 1024;

/**
 * `run.requested`: create the run, fetch the issue, check that a webhook's issue still waits for
 * Lisa, take the issue's lock, snapshot the config, take a run slot, move the issue to in_progress
 * and launch the first step (the planning step with several repos). Every stage is idempotent, so
 * a redelivered message resumes where it stopped.
 */
export async function handleRunRequested(deps: PipelineDeps, msg: RunRequested): Promise<void> {
	const runId = msg.runId ?? ulid();
	let run = await ensureRun(deps, runId, msg);
	if (isTerminalRun(run.status)) return finalize(deps, runId);

	if (!run.config && run.epicTask) {
		const why = await whyEpicEnded(deps, run.epicTask.runId);
		if (why) {
			await cancelQuietly(deps, run.runId, why, { untouched: true });
			return finalize(deps, runId);
		}
	}
	if (!run.config) {
		const prepared = await prepare(deps, run);
		if (!prepared) return finalize(deps, runId);
		run = prepared;
	}
	if (run.status === "queued" || isTerminalRun(run.status)) return finalize(deps, runId);
	// Said in prepare already, unless posting it failed there.
	run = await acknowledgeSession(deps, run);

	if (!run.tracker.started) run = await markStarted(deps, run);
	if (!run.tracker.startComment) run = await reportStart(deps, run);

	// A continued epic has no phase to run: it goes on with its tasks (docs/epics.md › Continuing).
	if (!run.steps.length && run.epic?.tasks.length)
		return deps.queue.send("events", epicAdvance({ runId, why: "the epic was continued" }));
	const claimed = await claimLaunch(deps, runId, 0);
	if (claimed) await startTask(deps, claimed, 0);
}

async function ensureRun(deps: PipelineDeps, runId: string, msg: RunRequested): Promise<Run> {
	const existing = await deps.store.getRun(runId);
	if (existing) return existing;
	const continued =
		msg.kind === "epic" && msg.retryOf ? await deps.store.getRun(msg.retryOf) : undefined;
	const issueRun = newRun({
		runId,
		source: msg.source,
		issueId: msg.issueId,
		issueKey: msg.issueKey,
		trigger: msg.trigger,
		deliveryId: msg.deliveryId,
		agentSessionId: msg.agentSessionId,
		request: msg.request,
		now: deps.now().toISOString(),
	});
	const run: Run = msg.epicTask
		? { ...issueRun, epicTask: msg.epicTask }
		: msg.kind === "epic"
			? {
					...issueRun,
					epic: continued?.epic?.tasks.length ? continueEpic(continued) : { tasks: [] },
				}
			: issueRun;
	if (await deps.store.createRun(run)) {
		// The run it continues hands the epic over: its tasks' runs report here from now on.
		if (continued?.epic && run.epic?.continues)
			await mutate(deps, continued.runId, (r) =>
				r.epic && !r.epic.continuedBy
					? { patch: { set: { epic: { ...r.epic, continuedBy: runId } } } }
					: {},
			);
		await note(
			deps,
			runId,
			"run.requested",
			`run requested by ${msg.trigger} for ${msg.issueKey ?? msg.issueId}`,
			{
				data: {
					trigger: msg.trigger,
					deliveryId: msg.deliveryId,
					retryOf: msg.retryOf,
					agentSessionId: msg.agentSessionId,
				},
			},
		);
		return run;
	}
	return (await deps.store.getRun(runId)) ?? run;
}

/**
 * Resolves the run's config, issue, lock, budget, slot and first step, in that order; returns the
 * running run, or undefined when a stage ended it or left it waiting (each stage says so on the
 * run itself).
 */
async function prepare(deps: PipelineDeps, run: Run): Promise<Run | undefined> {
	const config = await configOf(deps, run.runId);
	if (!config) return undefined;
	const found = await readIssue(deps, run);
	if (!found) return undefined;
	const issue = snapshotOf(found);
	// Before anything reaches the tracker: a webhook's run stands only while its issue (or agent
	// session) still waits for Lisa. API, retry and poll runs were asked for explicitly.
	if (run.trigger === "webhook") {
		const why = await whyUnwanted(deps, run, found, config);
		if (why) return cancelUnwanted(deps, run, issue, why);
	}
	// Linear shows an agent as unresponsive without an activity within 10 s: answer before waiting
	// for the issue's lock or a slot.
	run = await acknowledgeSession(deps, run);
	if (!(await takeIssueLock(deps, run, issue))) return undefined;
	if (!(await withinDailyBudget(deps, run, config, issue))) return undefined;
	if (!(await takeRunSlot(deps, run.runId, config))) return undefined;
	const gone = missingRepo(run, config);
	if (gone) return failForGood(deps, run.runId, gone).then(() => undefined);
	// An epic by its labels as the tracker has them now: a Trello move into pick_from says nothing
	// of the card's labels (docs/epics.md › Epics).
	if (run.trigger === "webhook" && isIssueRun(run) && isEpic(found.labels, config.epic))
		run = { ...run, epic: { tasks: [] } };
	return start(deps, run, config, issue);
}

/** The config the run will keep, or undefined when there is none to keep (the run failed). */
async function configOf(deps: PipelineDeps, runId: string): Promise<LisaConfig | undefined> {
	const state = deps.config();
	if (state.status === "ok") return state.config;
	const reason =
		state.status === "missing"
			? `no config: create ${state.file} (see docs/config.md › Config)`
			: state.error.message;
	await failForGood(deps, runId, reason);
	return undefined;
}

/** The issue as the tracker has it now; undefined when it cannot be read for good (the run failed). */
async function readIssue(deps: PipelineDeps, run: Run): Promise<TrackerIssue | undefined> {
	try {
		return await deps.tracker(run.source).fetchIssue(run.issueKey ?? run.issueId);
	} catch (err) {
		const lasting = err instanceof NotConfigured || (err instanceof TrackerError && !err.transient);
		if (!lasting) throw err; // transient: the message is redelivered
		await failForGood(deps, run.runId, (err as Error).message);
		return undefined;
	}
}

const snapshotOf = (found: TrackerIssue): IssueSnapshot => ({
	id: found.id,
	key: found.key,
	title: found.title,
	description: found.description.slice(0, MAX_DESCRIPTION),
	url: found.url,
	teamId: found.teamId,
});

/**
 * One active run per issue: takes the issue's lock (or retakes it from a run that no longer holds
 * it). Without it the run waits queued when the holder is this issue's finished run still updating
 * the tracker, or a follow-up round waits for the issue's other run; else it is cancelled quietly.
 */
async function takeIssueLock(deps: PipelineDeps, run: Run, issue: IssueSnapshot): Promise<boolean> {
	const lock = await deps.store.acquireIssueLock(run.source, issue.id, run.runId);
	if (lock.acquired) return true;
	const holder = await deps.store.getRun(lock.holder);
	if (!holdsIssue(holder, deps.now())) {
		const retaken = await deps.store.acquireIssueLock(run.source, issue.id, run.runId, lock.holder);
		if (retaken.acquired) return true;
	}
	// A finished run whose tracker updates are pending keeps the issue: this one waits, so the old
	// run's last status change and comment never land on top of the new run.
	if (run.round && holder && !isTerminalRun(holder.status))
		await waitQueued(
			deps,
			run.runId,
			`waiting for run ${holder.runId} of the issue to finish (one active run per issue)`,
		);
	else if (holder && isTerminalRun(holder.status))
		await waitQueued(
			deps,
			run.runId,
			`waiting for the issue's previous run ${holder.runId} (${holder.status}) to finish updating the tracker`,
		);
	// The other run owns the issue: this one leaves the tracker alone.
	else
		await cancelQuietly(
			deps,
			run.runId,
			`issue ${issue.key ?? issue.id} already has an active run (${lock.holder})`,
			{ issueId: issue.id, data: { activeRun: lock.holder } },
		);
	return false;
}

/**
 * A day's budget spent: the run waits queued (keeping the issue's lock) until the next day or a
 * raised budget; the sweeper asks again every pass.
 */
async function withinDailyBudget(
	deps: PipelineDeps,
	run: Run,
	config: LisaConfig,
	issue: IssueSnapshot,
): Promise<boolean> {
	const repo =
		run.round?.repo ??
		run.epicTask?.repo ??
		(run.epic || config.repos.length > 1 ? undefined : pickRepo(config, issue.title).name);
	const broke = await dailyBudgetWait(deps, config, repo);
	if (!broke) return true;
	await waitQueued(deps, run.runId, broke);
	await sayDailyWait(deps, run, issue.id, broke);
	return false;
}

/**
 * At most limits.max_concurrent_runs runs work at once. Without a slot the run stays queued
 * (keeping the issue's lock); the next run to finish, or the sweeper, sends its request again.
 */
async function takeRunSlot(
	deps: PipelineDeps,
	runId: string,
	config: LisaConfig,
): Promise<boolean> {
	const max = config.limits.max_concurrent_runs;
	const slot = await deps.store.acquireRunSlot(runId, max);
	if (slot.acquired) return true;
	await waitQueued(
		deps,
		runId,
		`waiting for a free slot: ${slot.active} of ${max} runs are active (limits.max_concurrent_runs)`,
	);
	return false;
}

/** Why a round's or an epic task's repository cannot be worked on: it left the config. */
function missingRepo(run: Run, config: LisaConfig): string | undefined {
	const known = (name: string) => config.repos.some((r) => r.name === name);
	if (run.round && !known(run.round.repo))
		return `repo "${run.round.repo}" of ${run.round.prUrl} is no longer in the config`;
	if (run.epicTask && !known(run.epicTask.repo))
		return `repo "${run.epicTask.repo}" of the epic's task ${run.epicTask.taskId} is no longer in the config`;
	return undefined;
}

/** The one write that starts the run: its issue, its config snapshot and its first step. */
async function start(
	deps: PipelineDeps,
	run: Run,
	config: LisaConfig,
	issue: IssueSnapshot,
): Promise<Run | undefined> {
	const { epic, round } = run;
	const first = firstStep(run, config, issue.title);
	const planning = first?.kind !== undefined;
	const res = await mutate(deps, run.runId, (r) => {
		if (r.status !== "queued" || r.config) return {};
		return {
			patch: {
				set: {
					status: nextRunStatus(r.status, planning ? "plan" : "start"),
					issueId: issue.id,
					issueKey: issue.key,
					title: issue.title,
					url: issue.url,
					issue,
					config,
					...(epic && !r.epic ? { epic } : {}),
				},
				...(first ? { appendSteps: [first] } : {}),
			},
		};
	});
	const what = `${issue.key ?? issue.id} "${issue.title}"`;
	if (res?.changed && round)
		await note(
			deps,
			run.runId,
			"run.started",
			`round ${round.number} on ${round.prUrl} (${round.repo}, branch ${round.branch}) for ${what}`,
		);
	else if (res?.changed)
		await note(
			deps,
			run.runId,
			planning ? "run.planning" : "run.started",
			startLine(run, first, what, config),
		);
	return res?.run;
}

/**
 * The run's first step: a round's repository; an epic's research (none when a continued epic goes
 * on with its tasks); an epic task's repository; the planning step with several repos
 * (docs/multi-repo.md › Multi-repo runs); else the one repository.
 */
function firstStep(run: Run, config: LisaConfig, title: string): Step | undefined {
	if (run.round)
		return { ...newStep(0, run.round.repo), branch: run.round.branch, prUrl: run.round.prUrl };
	if (run.epic) return run.epic.tasks.length ? undefined : { ...planStep(0), kind: "research" };
	if (run.epicTask) return newStep(0, run.epicTask.repo);
	return config.repos.length > 1 ? planStep(0) : newStep(0, pickRepo(config, title).name);
}

function startLine(run: Run, first: Step | undefined, what: string, config: LisaConfig): string {
	const repos = config.repos.map((r) => r.name).join(", ");
	if (!first) return `continuing the epic ${what} from run ${run.epic?.continues}: its tasks go on`;
	if (first.kind === "research") return `researching the epic ${what} across ${repos}`;
	if (first.kind) return `planning ${what} across ${repos}`;
	const task = run.epicTask;
	return task
		? `working on task ${task.taskId} of epic run ${task.runId}, ${what}, in ${first.repo}`
		: `working on ${what} in ${first.repo}`;
}

/** Why a webhook's run no longer has anything to do, or undefined when its issue still waits. */
async function whyUnwanted(
	deps: PipelineDeps,
	run: Run,
	issue: TrackerIssue,
	config: LisaConfig,
): Promise<string | undefined> {
	if (!run.agentSessionId)
		return whyNotQualifying(run.source, issue, config.source_config, config.epic);
	const sessions = deps.tracker(run.source).sessions;
	if (sessions) {
		try {
			const why = whySessionNotLive(await sessions.state(run.agentSessionId));
			if (why) return why;
		} catch (err) {
			if (err instanceof TrackerError && !err.transient)
				return `its agent session could not be read: ${err.message}`;
			throw err;
		}
	}
	// One run per session: the tracker's retry of a delegation (a new delivery) is not a new request.
	const earlier = (await deps.store.runsOfIssue(run.source, issue.id)).find(
		(r) => r.agentSessionId === run.agentSessionId && r.runId < run.runId,
	);
	return earlier ? `its agent session already has run ${earlier.runId}` : undefined;
}

/**
 * Cancels a webhook's run whose issue no longer waits for Lisa (a replayed or late delivery), or
 * already has an active run. Nothing of it reaches the tracker, not even its agent session.
 */
async function cancelUnwanted(
	deps: PipelineDeps,
	run: Run,
	issue: IssueSnapshot,
	why: string,
): Promise<undefined> {
	const name = issue.key ?? issue.id;
	const holder = await deps.store.issueLockHolder(run.source, issue.id);
	const other = holder && holder !== run.runId ? await deps.store.getRun(holder) : undefined;
	const active = other && !isTerminalRun(other.status) ? other : undefined;
	const reason = active
		? `issue ${name} already has an active run (${active.runId})`
		: `issue ${name} no longer waits for Lisa: ${why}`;
	await cancelQuietly(deps, run.runId, reason, {
		issueId: issue.id,
		untouched: true,
		data: { notWaiting: why, ...(active ? { activeRun: active.runId } : {}) },
	});
	return undefined;
}

/** Why a task's run must not start: its epic ended meanwhile (a cancel, say), or undefined. */
async function whyEpicEnded(deps: PipelineDeps, epicRunId: string): Promise<string | undefined> {
	const epic = await deps.store.getRun(await currentEpic(deps, epicRunId));
	if (!epic) return `its epic's run ${epicRunId} does not exist`;
	return isTerminalRun(epic.status) ? `its epic's run ${epic.runId} ${epic.status}` : undefined;
}

/**
 * Cancels a run that leaves the tracker alone: another run owns its issue, or (`untouched`) it
 * never touched the tracker at all, not even to say it ended.
 */
async function cancelQuietly(
	deps: PipelineDeps,
	runId: string,
	reason: string,
	how: { issueId?: string; untouched?: boolean; data?: Record<string, unknown> } = {},
): Promise<void> {
	const now = deps.now().toISOString();
	const tracker = { skip: true, ...(how.untouched ? { untouched: true } : {}) };
	await mutate(deps, runId, (r) => {
		if (isTerminalRun(r.status)) return {};
		const cancel = cancelPatch(r, now, reason);
		const issue = how.issueId ? { issueId: how.issueId } : {};
		return { patch: { ...cancel, set: { ...cancel.set, ...issue, tracker } } };
	});
	await note(deps, runId, "run.cancelled", reason, how.data ? { data: how.data } : {});
}

/** Leaves the run queued for the sweeper (or a finishing run) to send its request again; said once. */
async function waitQueued(deps: PipelineDeps, runId: string, why: string): Promise<undefined> {
	const waiting = await mutate(deps, runId, (r) =>
		r.status !== "queued" || r.waitingSince
			? {}
			: { patch: { set: { waitingSince: deps.now().toISOString() } } },
	);
	if (waiting?.changed) await note(deps, runId, "run.waiting", why);
	return undefined;
}

async function markStarted(deps: PipelineDeps, run: Run): Promise<Run> {
	const sc = run.config?.source_config;
	// A follow-up round leaves the issue where it is (in review) while it works.
	if (sc && run.issue && !run.round) {
		try {
			await deps.tracker(run.source).moveTo(run.issue.id, sc.in_progress, workflowStates(sc));
			await note(deps, run.runId, "tracker.moved", `issue moved to "${sc.in_progress}"`);
		} catch (err) {
			if (err instanceof TrackerError && err.transient) throw err;
			// A wrong state name must not block the work; it is visible on the run.
			await note(deps, run.runId, "tracker.error", (err as Error).message);
		}
	}
	return (await recordProgress(deps, run.runId, { started: true })) ?? run;
}
