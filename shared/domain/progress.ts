import type { StepFinished } from "../queue/messages";
import { type Run, type RunPatch, type Step, stepStatusAfter } from "./run";
import { isTerminalRun, isTerminalStep, nextRunStatus } from "./states";

// What the pipeline does next when a step reports (or is found dead). Pure: the handler applies the
// patch with one conditional write and then performs the side effect the decision names.

export type Decision =
	| { kind: "ignore"; reason: string; patch?: undefined }
	| { kind: "retry"; patch: RunPatch; stepIndex: number; attempt: number }
	| { kind: "launch"; patch: RunPatch; stepIndex: number }
	| { kind: "finish"; patch: RunPatch; outcome: "succeeded" | "failed" };

export function decideOnStepFinished(
	run: Run,
	msg: StepFinished,
	now: string,
	maxAttempts: number,
): Decision {
	if (isTerminalRun(run.status)) return { kind: "ignore", reason: `run already ${run.status}` };
	const step = run.steps[msg.stepIndex];
	if (!step) return { kind: "ignore", reason: `run has no step ${msg.stepIndex}` };
	if (msg.attempt !== step.attempt)
		return {
			kind: "ignore",
			reason: `stale report for attempt ${msg.attempt} (step is on attempt ${step.attempt})`,
		};
	if (isTerminalStep(step.status)) return { kind: "ignore", reason: `step already ${step.status}` };

	if (msg.outcome === "failed" && msg.transient && step.attempt < maxAttempts) {
		return {
			kind: "retry",
			stepIndex: step.index,
			attempt: step.attempt + 1,
			patch: {
				steps: {
					[step.index]: {
						status: stepStatusAfter(step, "retry"),
						attempt: step.attempt + 1,
						error: `attempt ${step.attempt}: ${msg.error ?? "transient failure"}`,
						taskId: undefined,
						agentState: undefined,
						heartbeatAt: undefined,
						report: undefined,
						launchedAt: now,
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
		provider: msg.provider ?? step.provider,
		error: msg.outcome === "failed" ? (msg.error ?? "the step failed") : undefined,
	};

	if (msg.outcome === "succeeded") {
		const next = run.steps.find((s) => s.index > step.index && s.status === "pending");
		if (next) {
			return {
				kind: "launch",
				stepIndex: next.index,
				patch: {
					steps: {
						[step.index]: finished,
						[next.index]: { status: stepStatusAfter(next, "launch"), launchedAt: now },
					},
				},
			};
		}
		return {
			kind: "finish",
			outcome: "succeeded",
			patch: {
				set: { status: nextRunStatus(run.status, "succeed"), finishedAt: now, error: undefined },
				steps: { [step.index]: finished },
			},
		};
	}

	const steps: Record<number, Partial<Step>> = { [step.index]: finished };
	for (const s of run.steps)
		if (s.index !== step.index && !isTerminalStep(s.status))
			steps[s.index] = { status: stepStatusAfter(s, "cancel"), finishedAt: now };
	const where = run.steps.length > 1 ? `step ${step.index + 1} (${step.repo}) failed: ` : "";
	return {
		kind: "finish",
		outcome: "failed",
		patch: {
			set: {
				status: nextRunStatus(run.status, "fail"),
				finishedAt: now,
				error: `${where}${finished.error}`,
			},
			steps,
		},
	};
}

/** A run stopped by a person: every unfinished step is cancelled with it. */
export function cancelPatch(run: Run, now: string, reason: string): RunPatch {
	const steps: Record<number, Partial<Step>> = {};
	for (const s of run.steps)
		if (!isTerminalStep(s.status))
			steps[s.index] = { status: stepStatusAfter(s, "cancel"), finishedAt: now };
	return {
		set: { status: nextRunStatus(run.status, "cancel"), finishedAt: now, error: reason },
		steps,
	};
}

/** A run that cannot proceed before any step ran (issue not found, no repos, launch impossible). */
export function failPatch(run: Run, now: string, error: string): RunPatch {
	const steps: Record<number, Partial<Step>> = {};
	for (const s of run.steps)
		if (!isTerminalStep(s.status))
			steps[s.index] = { status: stepStatusAfter(s, "fail"), finishedAt: now, error };
	return { set: { status: nextRunStatus(run.status, "fail"), finishedAt: now, error }, steps };
}
