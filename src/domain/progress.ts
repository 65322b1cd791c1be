import type { StepFinished } from "../queue/messages";
import { attemptCost, type Costing } from "./cost";
import { acceptEpicPlan, acceptResearch } from "./epic-steps";
import { type Plan, validatePlan } from "./plan";
import {
	newStep,
	orderOf,
	PLAN_REPO,
	type Run,
	type RunPatch,
	type Step,
	type StepKind,
	type StepReport,
	stepStatusAfter,
	workSteps,
} from "./run";
import { isTerminalRun, isTerminalStep, nextRunStatus } from "./states";
import { stepLabel } from "./step-label";
import { type AttemptCost, withAttemptUsage } from "./usage";

// What the pipeline does next when a step reports (or is found dead). Pure: the handler applies the
// patch with one conditional write and then performs the side effects the decision names.

/** A step's outcome as the handler gets it: the task's report, or one Lisa concluded itself. */
export type StepOutcome = Omit<StepFinished, "type"> & {
	/**
	 * Not from the task: the sweeper or an ECS event concluded the attempt failed (lost, crashed,
	 * timed out, never launched). Such a conclusion may rest on a stale view, so a report the task
	 * stored for the attempt wins over it.
	 */
	synthetic?: true;
};

/** The outcome a stored report stands for (re-applied when the task's own message was lost). */
export function reportOutcome(runId: string, stepIndex: number, report: StepReport): StepOutcome {
	return {
		runId,
		stepIndex,
		attempt: report.attempt,
		outcome: report.outcome,
		branch: report.branch,
		prUrl: report.prUrl,
		prTitle: report.prTitle,
		changes: report.changes,
		error: report.error,
		transient: report.transient,
		provider: report.provider,
		plan: report.plan,
		research: report.research,
		epicPlan: report.epicPlan,
		usage: report.usage,
		round: report.round,
		budget: report.budget,
	};
}

/** What a decision rests on: a synthetic failure gives way to the report stored for its attempt. */
export function effectiveOutcome(run: Run, msg: StepOutcome): StepOutcome {
	if (!msg.synthetic) return msg;
	const report = run.steps[msg.stepIndex]?.report;
	return report?.attempt === msg.attempt ? reportOutcome(run.runId, msg.stepIndex, report) : msg;
}

export type Decision =
	| { kind: "ignore"; reason: string; patch?: undefined }
	/** The next attempt: launched now, or after `delaySeconds` (the step waits pending). */
	| { kind: "retry"; patch: RunPatch; stepIndex: number; attempt: number; delaySeconds: number }
	/**
	 * The run goes on: launch these steps (none while siblings of the same order still run). An
	 * epic's accepted plan (`epicPlanned`) goes on through its tasks instead (docs/epics.md › Epics).
	 */
	| { kind: "advance"; patch: RunPatch; launch: number[]; plan?: Plan; epicPlanned?: true }
	/** The run ended (finalize stops the tasks of siblings cancelled with it). */
	| {
			kind: "finish";
			patch: RunPatch;
			outcome: "succeeded" | "failed";
			/** A plan the handler refused (the task's checks are not trusted). */
			planErrors?: string[];
			/** An epic's research found the description not enough to plan: its questions. */
			needsSpec?: string[];
	  };

type Finish = Extract<Decision, { kind: "finish" }>;

export interface Limits {
	maxAttempts: number;
	/** How many steps of one order may run at once (`limits.parallel_steps`). */
	parallelSteps: number;
	/** The wait before the second attempt (`limits.retry_backoff_seconds`); doubled each time. */
	retryBackoffSeconds: number;
}

/** The longest wait before a retry: SQS delays a message 15 minutes at most. */
export const MAX_RETRY_DELAY_SECONDS = 900;

/** How long attempt `attempt` (2, 3, …) waits: the backoff, doubled per attempt, capped. */
export function retryDelaySeconds(backoff: number, attempt: number): number {
	return Math.min(MAX_RETRY_DELAY_SECONDS, Math.ceil(backoff * 2 ** Math.max(0, attempt - 2)));
}

/**
 * The attempt's container time and cost, priced as it is recorded
 * (docs/cost.md › Cost and budgets).
 */
function attemptSpend(
	step: Step,
	msg: StepOutcome,
	now: string,
	costing: Costing,
): { seconds: number; endedAt: string; cost: AttemptCost } {
	const seconds = step.launchedAt
		? Math.max(0, (Date.parse(now) - Date.parse(step.launchedAt)) / 1000)
		: 0;
	return { seconds, endedAt: now, cost: attemptCost(msg.usage, seconds, costing) };
}

export function decideOnStepFinished(
	run: Run,
	outcome: StepOutcome,
	now: string,
	limits: Limits,
	costing?: Costing,
): Decision {
	const msg = effectiveOutcome(run, outcome);
	if (isTerminalRun(run.status)) return { kind: "ignore", reason: `run already ${run.status}` };
	const step = run.steps[msg.stepIndex];
	if (!step) return { kind: "ignore", reason: `run has no step ${msg.stepIndex}` };
	if (msg.attempt !== step.attempt)
		return {
			kind: "ignore",
			reason: `stale report for attempt ${msg.attempt} (step is on attempt ${step.attempt})`,
		};
	if (isTerminalStep(step.status)) return { kind: "ignore", reason: `step already ${step.status}` };
	const usage = withAttemptUsage(
		step.usage,
		step.attempt,
		msg.usage,
		costing && attemptSpend(step, msg, now, costing),
	);

	if (msg.outcome === "failed" && msg.transient && step.attempt < limits.maxAttempts) {
		const attempt = step.attempt + 1;
		const delaySeconds = retryDelaySeconds(limits.retryBackoffSeconds, attempt);
		const at = new Date(Date.parse(now) + delaySeconds * 1000).toISOString();
		return {
			kind: "retry",
			stepIndex: step.index,
			attempt,
			delaySeconds,
			patch: {
				steps: {
					[step.index]: {
						status: stepStatusAfter(step, delaySeconds ? "defer" : "retry"),
						attempt,
						error: `attempt ${step.attempt}: ${msg.error ?? "transient failure"}`,
						taskId: undefined,
						agentState: undefined,
						heartbeatAt: undefined,
						report: undefined,
						usage,
						launchedAt: delaySeconds ? undefined : now,
						notBefore: delaySeconds ? at : undefined,
					},
				},
			},
		};
	}

	const finished: Partial<Step> = {
		status: stepStatusAfter(step, msg.outcome === "succeeded" ? "succeed" : "fail"),
		finishedAt: now,
		branch: msg.branch ?? step.branch,
		prUrl: msg.prUrl ?? step.prUrl,
		prTitle: msg.prTitle ?? step.prTitle,
		changes: msg.changes ?? step.changes,
		provider: msg.provider ?? step.provider,
		error: msg.outcome === "failed" ? (msg.error ?? "the step failed") : undefined,
		usage,
	};
	if (msg.outcome === "failed") return failRun(run, step.index, finished, now);
	if (step.kind === "plan") return acceptPlan(run, step, msg, finished, now, limits);
	// An accepted phase's files live on the epic, not twice in the run's one item (≤ 400 KB).
	const kept = { ...finished, report: undefined };
	if (step.kind === "research") return researched(run, step, msg, kept, now);
	if (step.kind === "epic_plan") return epicPlanned(run, step, msg, kept, now);

	const steps = run.steps.map((s) => (s.index === step.index ? { ...s, ...finished } : s));
	if (workSteps({ steps }).every((s) => s.status === "succeeded"))
		return {
			kind: "finish",
			outcome: "succeeded",
			patch: {
				set: { status: nextRunStatus(run.status, "succeed"), finishedAt: now, error: undefined },
				steps: { [step.index]: finished },
			},
		};
	const launch = nextWave(steps, limits.parallelSteps);
	const updates: Record<number, Partial<Step>> = { [step.index]: finished };
	for (const i of launch)
		updates[i] = { status: stepStatusAfter(steps[i] as Step, "launch"), launchedAt: now };
	return { kind: "advance", launch, patch: { steps: updates } };
}

/**
 * The pending steps to start now: those of the lowest order not yet succeeded, as many as the
 * parallelism leaves room for beside the ones already running.
 */
export function nextWave(steps: readonly Step[], parallel: number): number[] {
	const work = workSteps({ steps });
	const open = work.filter((s) => s.status !== "succeeded");
	if (!open.length || open.some((s) => s.status === "failed" || s.status === "cancelled"))
		return [];
	const current = Math.min(...open.map(orderOf));
	// A retry waiting out its backoff counts as active: its own message launches it.
	const active = open.filter(
		(s) => s.status === "launching" || s.status === "running" || s.notBefore,
	).length;
	return open
		.filter((s) => orderOf(s) === current && s.status === "pending" && !s.notBefore)
		.slice(0, Math.max(0, parallel - active))
		.map((s) => s.index);
}

/**
 * The planning step succeeded: its plan is checked again here (the task is not trusted to have
 * done it), stored on the run, and becomes one step per entry, the first order launched.
 */
function acceptPlan(
	run: Run,
	step: Step,
	msg: StepOutcome,
	finished: Partial<Step>,
	now: string,
	limits: Limits,
): Decision {
	const repos = run.config?.repos.map((r) => r.name) ?? [];
	const verdict = msg.plan
		? validatePlan(msg.plan, repos)
		: { ok: false as const, errors: ["the planning step reported no plan"] };
	if (!verdict.ok) return refuse(run, step, finished, now, "the plan is invalid", verdict.errors);
	const steps: Step[] = [
		...run.steps.map((s) => (s.index === step.index ? { ...s, ...finished } : s)),
		...verdict.plan.steps.map((p, i) => ({
			...newStep(run.steps.length + i, p.repo, p.scope),
			order: p.order,
		})),
	];
	const launch = nextWave(steps, limits.parallelSteps);
	for (const i of launch)
		steps[i] = {
			...(steps[i] as Step),
			status: stepStatusAfter(steps[i] as Step, "launch"),
			launchedAt: now,
		};
	return {
		kind: "advance",
		launch,
		plan: verdict.plan,
		patch: {
			set: { status: nextRunStatus(run.status, "start"), plan: verdict.plan },
			replaceSteps: steps,
		},
	};
}

/** A phase's report refused: the step fails with the reasons, and the run with it. */
function refuse(
	run: Run,
	step: Step,
	finished: Partial<Step>,
	now: string,
	what: string,
	errors: string[],
): Finish {
	const error = `${what}: ${errors.join("; ")}`;
	const refused = { ...finished, status: stepStatusAfter(step, "fail"), error };
	return { ...failRun(run, step.index, refused, now), planErrors: errors };
}

/**
 * An epic's research step succeeded: checked again, then the plan phase starts in a fresh context;
 * or, when the research asks for a spec, the epic ends there with its questions
 * (docs/epics.md › Epics).
 */
function researched(
	run: Run,
	step: Step,
	msg: StepOutcome,
	finished: Partial<Step>,
	now: string,
): Decision {
	const verdict = acceptResearch(msg.research);
	if (!verdict.ok)
		return refuse(run, step, finished, now, "the research is incomplete", verdict.errors);
	const epic = { ...run.epic, tasks: run.epic?.tasks ?? [], research: verdict.value };
	const questions = verdict.value.needsSpec;
	if (questions)
		return {
			kind: "finish",
			outcome: "failed",
			needsSpec: questions,
			patch: {
				set: {
					status: nextRunStatus(run.status, "fail"),
					finishedAt: now,
					error: `the epic needs a spec: its research left ${questions.length} question${questions.length === 1 ? "" : "s"} open (asked on the issue)`,
					epic,
				},
				steps: { [step.index]: finished },
			},
		};
	const plan: Step = { ...newStep(run.steps.length, PLAN_REPO), kind: "epic_plan" };
	const steps = [
		...run.steps.map((s) => (s.index === step.index ? { ...s, ...finished } : s)),
		{ ...plan, status: stepStatusAfter(plan, "launch"), launchedAt: now },
	];
	return { kind: "advance", launch: [plan.index], patch: { set: { epic }, replaceSteps: steps } };
}

/** An epic's plan step succeeded: checked again, its tasks become the epic's, to be created. */
function epicPlanned(
	run: Run,
	step: Step,
	msg: StepOutcome,
	finished: Partial<Step>,
	now: string,
): Decision {
	const verdict = acceptEpicPlan(run, msg.epicPlan);
	if (!verdict.ok)
		return refuse(run, step, finished, now, "the epic's plan is invalid", verdict.errors);
	return {
		kind: "advance",
		launch: [],
		epicPlanned: true,
		patch: {
			set: { status: nextRunStatus(run.status, "start"), epic: verdict.value },
			steps: { [step.index]: finished },
		},
	};
}

/** A step failed for good: the rest stop (pending ones cancelled, running siblings too). */
function failRun(run: Run, index: number, finished: Partial<Step>, now: string): Finish {
	const steps = { ...closeOpenSteps(run, "cancel", now), [index]: finished };
	const after = run.steps.map((s) => ({ ...s, ...steps[s.index] }));
	return {
		kind: "finish",
		outcome: "failed",
		patch: {
			set: {
				status: nextRunStatus(run.status, "fail"),
				finishedAt: now,
				error: failureSummary(after, index),
			},
			steps,
		},
	};
}

/**
 * The run's error: what failed and, for a run of several steps, which succeeded (with their pull
 * requests) and which were cancelled.
 */
const PHASE_FAILED: Record<StepKind, string> = {
	plan: "planning failed",
	research: "the epic's research failed",
	epic_plan: "the epic's plan failed",
};

export function failureSummary(steps: readonly Step[], failedIndex: number): string {
	const failed = steps[failedIndex];
	const error = failed?.error ?? "the step failed";
	if (!failed) return error;
	if (failed.kind) return `${PHASE_FAILED[failed.kind]}: ${error}`;
	const work = workSteps({ steps });
	if (work.length <= 1) return error;
	const label = (s: Step) => stepLabel(steps, s.index);
	const succeeded = work.filter((s) => s.status === "succeeded");
	const cancelled = work.filter((s) => s.status === "cancelled");
	return [
		`${label(failed)} failed: ${error}`,
		succeeded.length
			? `Succeeded: ${succeeded.map((s) => `${label(s)} ${s.prUrl ?? s.branch ?? ""}`.trim()).join(", ")}`
			: "No step succeeded.",
		...(cancelled.length ? [`Cancelled: ${cancelled.map(label).join(", ")}`] : []),
	].join("\n");
}

/** The tasks a finished run must stop: those of steps cancelled with it (stopping is idempotent). */
export function tasksToStop(run: Run): string[] {
	if (!isTerminalRun(run.status)) return [];
	return run.steps.flatMap((s) => (s.status === "cancelled" && s.taskId ? [s.taskId] : []));
}

/** A run stopped by a person: every unfinished step is cancelled with it. */
export function cancelPatch(run: Run, now: string, reason: string): RunPatch {
	return {
		set: { status: nextRunStatus(run.status, "cancel"), finishedAt: now, error: reason },
		steps: closeOpenSteps(run, "cancel", now),
	};
}

/** A run that cannot proceed before any step ran (issue not found, no repos, launch impossible). */
export function failPatch(run: Run, now: string, error: string): RunPatch {
	return {
		set: { status: nextRunStatus(run.status, "fail"), finishedAt: now, error },
		steps: closeOpenSteps(run, "fail", now, { error }),
	};
}

/** Ends every unfinished step of a run that ends. */
function closeOpenSteps(
	run: Run,
	event: "cancel" | "fail",
	now: string,
	extra: Partial<Step> = {},
): Record<number, Partial<Step>> {
	const steps: Record<number, Partial<Step>> = {};
	for (const s of run.steps)
		if (!isTerminalStep(s.status))
			steps[s.index] = { status: stepStatusAfter(s, event), finishedAt: now, ...extra };
	return steps;
}
