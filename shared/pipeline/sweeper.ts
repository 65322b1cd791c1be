import type { Run, Step } from "../domain/run";
import { isTerminalRun, isTerminalStep, type RunStatus } from "../domain/states";
import type { StepFinished } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { finalize, redrive } from "./finalize";
import { note } from "./mutate";
import { handleStepFinished } from "./steps";

// The sweeper reconciles what at-least-once delivery and crashes can leave behind.

export const SWEEP = {
	/** A queued run older than this lost its intake message. */
	queuedGraceMs: 60_000,
	/** A task that has not started (no heartbeat) this long after launch is lost. */
	launchGraceMs: 5 * 60_000,
	/** A running task silent for this long is lost (it heartbeats every ~10 s). */
	heartbeatTimeoutMs: 2 * 60_000,
	/** A report the task stored but whose queue message never arrived is applied after this. */
	reportGraceMs: 30_000,
	/** Finished runs whose tracker updates are incomplete are retried for this long. */
	finalizeWindowMs: 24 * 3600_000,
	finalizeGraceMs: 30_000,
};

export interface SweepReport {
	redriven: number;
	reported: number;
	lost: number;
	timedOut: number;
	finalized: number;
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
	const ago = (ms: number) => new Date(now.getTime() - (opts.restarted ? 0 : ms)).toISOString();
	const report: SweepReport = { redriven: 0, reported: 0, lost: 0, timedOut: 0, finalized: 0 };

	for (const run of await deps.store.runsByStatus("queued", { before: ago(SWEEP.queuedGraceMs) })) {
		await redrive(deps, run);
		// A run waiting for a slot is asked again every sweep; its timeline says so once.
		if (!run.waitingSince)
			await note(
				deps,
				run.runId,
				"run.redriven",
				"run was still queued; its request was sent again",
			);
		report.redriven++;
	}

	// A slot whose run ended without giving it back (a crash inside finalize) is freed.
	for (const holder of await deps.store.runSlotHolders()) {
		const run = await deps.store.getRun(holder);
		if (!run || isTerminalRun(run.status)) await deps.store.releaseRunSlot(holder);
	}

	const active: RunStatus[] = ["planning", "running"];
	for (const status of active)
		for (const run of await deps.store.runsByStatus(status, { before: now.toISOString() }))
			for (const step of run.steps)
				if (!isTerminalStep(step.status) && step.status !== "pending")
					await checkStep(deps, run, step, now, opts.restarted ?? false, report);

	for (const status of ["succeeded", "failed", "cancelled"] as const) {
		const window = {
			after: new Date(now.getTime() - SWEEP.finalizeWindowMs).toISOString(),
			before: ago(SWEEP.finalizeGraceMs),
		};
		for (const run of await deps.store.runsByStatus(status, window))
			if (!run.tracker.done) {
				await finalize(deps, run.runId);
				report.finalized++;
			}
	}
	return report;
}

async function checkStep(
	deps: PipelineDeps,
	run: Run,
	step: Step,
	now: Date,
	restarted: boolean,
	report: SweepReport,
): Promise<void> {
	const age = (iso: string | undefined) =>
		iso ? now.getTime() - Date.parse(iso) : Number.POSITIVE_INFINITY;
	const base = {
		type: "step.finished" as const,
		runId: run.runId,
		stepIndex: step.index,
		attempt: step.attempt,
	};
	const lost = async (why: string) => {
		report.lost++;
		await note(deps, run.runId, "step.lost", why, {
			step: step.index,
			data: { attempt: step.attempt, taskId: step.taskId },
		});
		await handleStepFinished(deps, { ...base, outcome: "failed", transient: true, error: why });
	};

	// The task finished and stored its report, but the message never arrived (or was lost).
	if (step.report && step.report.attempt === step.attempt) {
		if (restarted || age(step.report.at) > SWEEP.reportGraceMs) {
			report.reported++;
			const r = step.report;
			const msg: StepFinished = {
				...base,
				outcome: r.outcome,
				branch: r.branch,
				prUrl: r.prUrl,
				error: r.error,
				transient: r.transient,
				provider: r.provider,
				plan: r.plan,
			};
			await handleStepFinished(deps, msg);
		}
		return;
	}

	const timeoutMin = run.config?.limits.step_timeout_minutes ?? 60;
	if (age(step.launchedAt) > timeoutMin * 60_000) {
		report.timedOut++;
		const why = `step timed out after ${timeoutMin} minutes`;
		if (step.taskId) await deps.launcher.stop(step.taskId, why).catch(() => {});
		await note(deps, run.runId, "step.timed_out", why, { step: step.index });
		await handleStepFinished(deps, { ...base, outcome: "failed", transient: false, error: why });
		return;
	}

	if (step.status === "launching") {
		if (restarted || age(step.launchedAt) > SWEEP.launchGraceMs)
			await lost("the agent task never started");
		return;
	}

	const alive = step.taskId ? await deps.launcher.isAlive(step.taskId) : false;
	if (alive === false) {
		// The ECS event usually reports this first; this is the backstop when it was lost.
		const why = step.taskId
			? await deps.launcher.stopReason?.(step.taskId).catch(() => undefined)
			: undefined;
		await lost(
			`the agent task ${step.taskId ?? "(unknown)"} stopped without reporting a result${why ? `: ${why}` : ""}`,
		);
		return;
	}
	const silentFor = age(step.heartbeatAt ?? step.launchedAt);
	const limit = step.heartbeatAt ? SWEEP.heartbeatTimeoutMs : SWEEP.launchGraceMs;
	if (silentFor > limit) {
		const why = `no heartbeat from the agent task for ${Math.round(silentFor / 1000)} s`;
		if (step.taskId) await deps.launcher.stop(step.taskId, why).catch(() => {});
		await lost(why);
	}
}
