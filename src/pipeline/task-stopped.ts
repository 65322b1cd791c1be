import type { PipelineDeps } from "./deps";
import { failAttempt } from "./steps";

// A task that stopped, as its launcher saw it: ECS's task state-change event in AWS, the container
// launcher's own wait locally. One that stopped without storing its report crashed (out of memory,
// Spot reclaim, a non-zero exit) and is handled as a transient failure: retried up to
// max_attempts, then failed with the reason. The sweeper finds the same crashes when this is lost.

export interface StoppedTask {
	taskId: string;
	runId: string;
	/** Absent when the launcher could not tell: the step that recorded `taskId` is meant. */
	stepIndex?: number;
	attempt?: number;
	/** Why it stopped, one line (exit code, out of memory, stop code). */
	reason: string;
	data?: Record<string, unknown>;
}

export type StoppedOutcome =
	| { handled: true; runId: string; stepIndex: number; attempt: number; reason: string }
	| { handled: false; ignored: string };

export async function taskStopped(deps: PipelineDeps, task: StoppedTask): Promise<StoppedOutcome> {
	const ignore = (why: string): StoppedOutcome => {
		deps.log.info({ why, taskId: task.taskId }, "stopped task ignored");
		return { handled: false, ignored: why };
	};
	const run = await deps.store.getRun(task.runId);
	if (!run) return ignore(`run ${task.runId} does not exist`);
	const step =
		task.stepIndex !== undefined
			? run.steps[task.stepIndex]
			: run.steps.find((s) => s.taskId === task.taskId);
	if (!step) return ignore(`run ${run.runId} has no step for task ${task.taskId}`);
	const attempt = task.attempt ?? step.attempt;
	if (step.attempt !== attempt)
		return ignore(`task ran attempt ${attempt}; the step is on attempt ${step.attempt}`);
	if (step.status !== "launching" && step.status !== "running")
		return ignore(`step is ${step.status}`);
	if (step.taskId && step.taskId !== task.taskId)
		return ignore(`the step's attempt runs as ${step.taskId}, not ${task.taskId}`);
	// The task stores its report before sending step.finished: that message is on its way (and the
	// sweeper re-sends it if it is lost), so this stop is the normal end of the task.
	if (step.report?.attempt === attempt) return ignore("the task reported its result");

	const reason = `the agent task stopped without reporting a result: ${task.reason}`;
	await failAttempt(deps, run.runId, step.index, attempt, {
		event: "step.crashed",
		error: reason,
		transient: true,
		data: { attempt, taskId: task.taskId, ...task.data },
	});
	return { handled: true, runId: run.runId, stepIndex: step.index, attempt, reason };
}
