import { FINALIZE_WINDOW_MS } from "../domain/issue-lock";
import { reportOutcome } from "../domain/progress";
import { type Run, type Step, stepStatusAfter } from "../domain/run";
import { isTerminalRun, isTerminalStep, type RunStatus } from "../domain/states";
import { stepLabel } from "../domain/step-label";
import { epicAdvance } from "../queue/messages";
import { sweepPaused } from "./budget";
import type { PipelineDeps } from "./deps";
import { failForGood, finalize, redrive } from "./finalize";
import { mutate, note } from "./mutate";
import { failAttempt, handleStepFinished, handleStepLaunch, scheduleLaunch } from "./steps";

// The sweeper reconciles what at-least-once delivery and crashes can leave behind. It finds runs
// through the status index, which is eventually consistent: every decision about a run is taken on
// the run read again (consistently), never on what the index listed.

export const SWEEP = {
	/** A queued run older than this lost its intake message. */
	queuedGraceMs: 60_000,
	/** A started run whose first step is still pending this long lost its intake message. */
	intakeGraceMs: 60_000,
	/**
	 * Re-sends of a run's request after its intake stopped before the run gives up: an intake that
	 * fails every time (an error no retry cures) ends visibly instead of being sent again forever.
	 */
	maxIntakeRedrives: 10,
	/** A task that has not started (no heartbeat) this long after launch is lost. */
	launchGraceMs: 5 * 60_000,
	/** A running task silent for this long is lost (it heartbeats every ~10 s). */
	heartbeatTimeoutMs: 2 * 60_000,
	/** A report the task stored but whose queue message never arrived is applied after this. */
	reportGraceMs: 30_000,
	/** A retry still waiting this long after its backoff lost its launch message. */
	scheduleGraceMs: 60_000,
	/** Finished runs whose tracker updates are incomplete are retried for this long. */
	finalizeWindowMs: FINALIZE_WINDOW_MS,
	finalizeGraceMs: 30_000,
	/** An epic working through its tasks untouched this long gets a pass (a lost `epic.advance`). */
	epicGraceMs: 60_000,
};

export interface SweepReport {
	redriven: number;
	reported: number;
	lost: number;
	timedOut: number;
	finalized: number;
	/** Runs whose handling threw this pass (logged; the next pass tries again). */
	errors: number;
}

interface Pass {
	/** The local stack just started: its tasks and in-memory queues are gone. */
	restarted: boolean;
	report: SweepReport;
	/** How long ago `iso` was (infinitely long when unset). */
	age(iso: string | undefined): number;
}

/**
 * One pass. `restarted` (the local stack just started): tasks of the previous process are gone and
 * the in-memory queues are empty, so nothing waits for a grace period.
 */
export async function sweep(
	deps: PipelineDeps,
	opts: { restarted?: boolean } = {},
): Promise<SweepReport> {
	const now = deps.now();
	const restarted = opts.restarted ?? false;
	const ago = (ms: number) => new Date(now.getTime() - (restarted ? 0 : ms)).toISOString();
	const pass: Pass = {
		restarted,
		report: { redriven: 0, reported: 0, lost: 0, timedOut: 0, finalized: 0, errors: 0 },
		age: (iso) => (iso ? now.getTime() - Date.parse(iso) : Number.POSITIVE_INFINITY),
	};

	for (const run of await deps.store.runsByStatus("queued", { before: ago(SWEEP.queuedGraceMs) }))
		await guarded(deps, pass, run.runId, async () => {
			// A run waiting for a slot (or its issue) is asked again every sweep; it is not stuck.
			if (run.waitingSince) await redrive(deps, run);
			else if (!(await redriveIntake(deps, run, "run was still queued"))) return;
			pass.report.redriven++;
		});

	// A slot whose run ended without giving it back (a crash inside finalize) is freed.
	for (const holder of await deps.store.runSlotHolders()) {
		const run = await deps.store.getRun(holder);
		if (!run || isTerminalRun(run.status)) await deps.store.releaseRunSlot(holder);
	}

	const active: RunStatus[] = ["planning", "running"];
	for (const status of active)
		for (const listed of await deps.store.runsByStatus(status, { before: now.toISOString() }))
			await guarded(deps, pass, listed.runId, () => sweepRun(deps, listed.runId, pass));

	// A run paused at its cost limit: said, expired, and its running siblings watched.
	for (const listed of await deps.store.runsByStatus("awaiting_approval", {
		before: now.toISOString(),
	}))
		await guarded(deps, pass, listed.runId, async () => {
			await sweepPaused(deps, listed);
			for (const step of listed.steps)
				if (step.status === "launching" || step.status === "running")
					await checkStep(deps, listed.runId, step.index, pass);
		});

	for (const status of ["succeeded", "failed", "cancelled"] as const) {
		const window = {
			after: new Date(now.getTime() - SWEEP.finalizeWindowMs).toISOString(),
			before: ago(SWEEP.finalizeGraceMs),
		};
		for (const run of await deps.store.runsByStatus(status, window))
			if (!run.tracker.done)
				await guarded(deps, pass, run.runId, async () => {
					await finalize(deps, run.runId);
					pass.report.finalized++;
				});
	}
	return pass.report;
}

/** One run's trouble (a tracker or ECS outage) must not keep the pass from the others. */
async function guarded(
	deps: PipelineDeps,
	pass: Pass,
	runId: string,
	work: () => Promise<void>,
): Promise<void> {
	try {
		await work();
	} catch (err) {
		pass.report.errors++;
		deps.log.error({ err, runId }, "sweeper could not handle the run; the next pass retries");
	}
}

async function sweepRun(deps: PipelineDeps, runId: string, pass: Pass): Promise<void> {
	const run = await deps.store.getRun(runId);
	if (!run || run.status === "queued" || isTerminalRun(run.status)) return;
	// An epic working through its tasks: a pass makes up for a lost `epic.advance`
	// (docs/epics.md › Epics).
	if (run.epic?.tasks.length && (pass.restarted || pass.age(run.updatedAt) > SWEEP.epicGraceMs))
		await deps.queue.send("events", epicAdvance({ runId, why: "the sweeper's pass" }));
	const first = run.steps[0];
	if (first?.status === "pending" && !first.notBefore) return resumeIntake(deps, run, pass);
	for (const step of run.steps) if (step.notBefore) await checkScheduled(deps, run, step, pass);
	// The first step checked uses the run just read; a check may change it, so later ones re-read.
	let fresh: Run | undefined = run;
	for (const step of run.steps)
		if (!isTerminalStep(step.status) && step.status !== "pending") {
			await checkStep(deps, runId, step.index, pass, fresh);
			fresh = undefined;
		}
}

/**
 * A retry waiting out its backoff: its launch message was lost with an in-memory queue (a
 * restart), so it is sent again; or it is overdue, so the step is launched here.
 */
async function checkScheduled(deps: PipelineDeps, run: Run, step: Step, pass: Pass): Promise<void> {
	if (step.status !== "pending" || !step.notBefore) return;
	if (pass.restarted) return scheduleLaunch(deps, run, step.index);
	if (pass.age(step.notBefore) <= SWEEP.scheduleGraceMs) return;
	await handleStepLaunch(deps, { runId: run.runId, stepIndex: step.index, attempt: step.attempt });
}

/**
 * The intake started the run but stopped before launching its first step (tracker errors until the
 * message went to the DLQ, a timeout, a restart that emptied the local queue). Its request is sent
 * again: the intake resumes where it stopped, and only one launch can claim the step.
 */
async function resumeIntake(deps: PipelineDeps, run: Run, pass: Pass): Promise<void> {
	if (!pass.restarted && pass.age(run.updatedAt) <= SWEEP.intakeGraceMs) return;
	if (await redriveIntake(deps, run, "the run had not launched its first step"))
		pass.report.redriven++;
}

/**
 * Sends the request of a run whose intake stopped again, counted on the run; after
 * SWEEP.maxIntakeRedrives the run fails instead. Returns whether it was sent.
 */
async function redriveIntake(deps: PipelineDeps, run: Run, why: string): Promise<boolean> {
	const max = SWEEP.maxIntakeRedrives;
	const res = await mutate(deps, run.runId, (r) => {
		if (r.status !== run.status || r.version !== run.version) return {};
		if ((r.intakeRedrives ?? 0) >= max) return { give: true };
		return { patch: { set: { intakeRedrives: (r.intakeRedrives ?? 0) + 1 } } };
	});
	if (res?.decision.give) {
		await failForGood(
			deps,
			run.runId,
			`its intake did not complete: the request was sent again ${max} times (see the logs)`,
		);
		return false;
	}
	if (!res?.changed) return false;
	await redrive(deps, res.run);
	await note(deps, run.runId, "run.redriven", `${why}; its request was sent again`, {
		data: { redrives: res.run.intakeRedrives },
	});
	return true;
}

/** The step as it is now (read unless `fresh` was just read); undefined when nothing is left to check. */
async function current(deps: PipelineDeps, runId: string, index: number, fresh?: Run) {
	const run = fresh ?? (await deps.store.getRun(runId));
	const step = run?.steps[index];
	if (!run || !step || isTerminalRun(run.status) || isTerminalStep(step.status)) return undefined;
	if (step.status === "pending") return undefined;
	return { run, step };
}

async function checkStep(
	deps: PipelineDeps,
	runId: string,
	index: number,
	pass: Pass,
	fresh?: Run,
): Promise<void> {
	const found = await current(deps, runId, index, fresh);
	if (!found) return;
	const { run, step } = found;
	const { age, report } = pass;
	const lost = async (why: string) => {
		report.lost++;
		await failAttempt(deps, runId, index, step.attempt, {
			event: "step.lost",
			error: why,
			transient: true,
			data: { attempt: step.attempt, taskId: step.taskId },
		});
	};

	// The task finished and stored its report, but the message never arrived (or was lost).
	if (step.report && step.report.attempt === step.attempt) {
		if (pass.restarted || age(step.report.at) > SWEEP.reportGraceMs) {
			report.reported++;
			await handleStepFinished(deps, reportOutcome(runId, index, step.report));
		}
		return;
	}

	const timeoutMin = run.config?.limits.step_timeout_minutes ?? 60;
	if (age(step.launchedAt) > timeoutMin * 60_000) {
		report.timedOut++;
		const why = `step timed out after ${timeoutMin} minutes`;
		if (step.taskId) await deps.launcher.stop(step.taskId, why).catch(() => {});
		await failAttempt(deps, runId, index, step.attempt, {
			event: "step.timed_out",
			error: why,
			transient: false,
		});
		return;
	}

	if (step.status === "launching") return checkLaunching(deps, runId, step, pass, lost);

	const task = step.taskId ? await deps.launcher.inspect(step.taskId) : {};
	if (task.alive === false) {
		// The ECS event usually reports this first; this is the backstop when it was lost.
		await lost(
			`the agent task ${step.taskId} stopped without reporting a result${task.stopReason ? `: ${task.stopReason}` : ""}`,
		);
		return;
	}
	if (!silence(step, age)) return;
	// The task may have written since the read above (asking ECS takes a while): a healthy task is
	// never stopped on an old heartbeat.
	const again = (await current(deps, runId, index))?.step;
	if (!again || again.attempt !== step.attempt || again.report?.attempt === step.attempt) return;
	const silentFor = silence(again, age);
	if (!silentFor) return;
	const why = `no heartbeat from the agent task for ${Math.round(silentFor / 1000)} s`;
	if (again.taskId) await deps.launcher.stop(again.taskId, why).catch(() => {});
	await lost(why);
}

/** How long a running step's task has been silent, when that is longer than allowed. */
function silence(step: Step, age: Pass["age"]): number | undefined {
	const silentFor = age(step.heartbeatAt ?? step.launchedAt);
	const limit = step.heartbeatAt ? SWEEP.heartbeatTimeoutMs : SWEEP.launchGraceMs;
	return silentFor > limit ? silentFor : undefined;
}

/**
 * A launching step: its task was started but not recorded as running, or never started. A task
 * that heartbeats is alive even when recording its id failed: it is recorded as running (without
 * an id, its heartbeat alone tells whether it lives) rather than launched a second time.
 */
async function checkLaunching(
	deps: PipelineDeps,
	runId: string,
	step: Step,
	pass: Pass,
	lost: (why: string) => Promise<void>,
): Promise<void> {
	const { age } = pass;
	if (pass.restarted) return lost("the agent task never started");
	if (step.heartbeatAt && age(step.heartbeatAt) <= SWEEP.heartbeatTimeoutMs) {
		const res = await mutate(deps, runId, (r) => {
			const s = r.steps[step.index];
			if (s?.status !== "launching" || s.attempt !== step.attempt) return {};
			return { patch: { steps: { [step.index]: { status: stepStatusAfter(s, "started") } } } };
		});
		if (res?.changed)
			await note(
				deps,
				runId,
				"step.running",
				`${stepLabel(res.run.steps, step.index)} attempt ${step.attempt} is running: its task heartbeats, though its id was not recorded`,
				{ step: step.index, data: { attempt: step.attempt } },
			);
		return;
	}
	if (step.heartbeatAt)
		return lost(
			`no heartbeat from the agent task for ${Math.round(age(step.heartbeatAt) / 1000)} s`,
		);
	if (age(step.launchedAt) > SWEEP.launchGraceMs) await lost("the agent task never started");
}
