import * as z from "zod";
import { STARTED_BY_PREFIX } from "../config/links";
import { describeStop } from "../launcher/ecs";
import type { PipelineDeps } from "./deps";
import { failAttempt } from "./steps";

// Crash detection in AWS: EventBridge delivers "ECS Task State Change" for every task of the cluster.
// A Lisa task that stopped without storing its report crashed (OOM, Spot reclaim, image pull failure,
// non-zero exit) and is handled like a transient failure: retried up to max_attempts, then failed
// with the stop reason. The sweeper finds the same crashes from DescribeTasks and stale heartbeats
// when an event is lost.

const envVar = z.object({ name: z.string(), value: z.string().optional() });

/** The fields of the event's `detail` this handler reads; the rest is ignored. */
const taskStateDetailSchema = z.object({
	taskArn: z.string(),
	lastStatus: z.string(),
	startedBy: z.string().optional(),
	stopCode: z.string().optional(),
	stoppedReason: z.string().optional(),
	containers: z
		.array(
			z.object({
				name: z.string().optional(),
				exitCode: z.number().optional(),
				reason: z.string().optional(),
			}),
		)
		.optional(),
	overrides: z
		.object({
			containerOverrides: z.array(z.object({ environment: z.array(envVar).optional() })).optional(),
		})
		.optional(),
});
type TaskStateDetail = z.infer<typeof taskStateDetailSchema>;

interface TaskStateEvent {
	"detail-type": string;
	source: string;
	detail: unknown;
}

type TaskEventOutcome =
	| { handled: true; runId: string; stepIndex: number; attempt: number; reason: string }
	| { handled: false; ignored: string };

/** Which run, step and attempt a task ran, from the environment the launcher gave it. */
function taskRef(detail: TaskStateDetail) {
	const env = new Map<string, string | undefined>();
	for (const o of detail.overrides?.containerOverrides ?? [])
		for (const v of o.environment ?? []) env.set(v.name, v.value);
	const runId =
		env.get("LISA_RUN_ID") ??
		(detail.startedBy?.startsWith(STARTED_BY_PREFIX)
			? detail.startedBy.slice(STARTED_BY_PREFIX.length)
			: undefined);
	const num = (name: string) => {
		const n = Number(env.get(name));
		return env.has(name) && Number.isInteger(n) ? n : undefined;
	};
	return runId
		? { runId, stepIndex: num("LISA_STEP_INDEX"), attempt: num("LISA_ATTEMPT") }
		: undefined;
}

async function handleTaskStateChange(
	deps: PipelineDeps,
	event: TaskStateEvent,
): Promise<TaskEventOutcome> {
	const ignore = (why: string): TaskEventOutcome => {
		deps.log.info({ why }, "ECS task event ignored");
		return { handled: false, ignored: why };
	};
	if (event.source !== "aws.ecs" || event["detail-type"] !== "ECS Task State Change")
		return ignore(`not an ECS task state change: ${event.source} / ${event["detail-type"]}`);
	const parsed = taskStateDetailSchema.safeParse(event.detail);
	if (!parsed.success) return ignore(`malformed task detail: ${parsed.error.message}`);
	const detail = parsed.data;
	if (detail.lastStatus !== "STOPPED") return ignore(`task is ${detail.lastStatus}`);
	const ref = taskRef(detail);
	if (!ref) return ignore(`task ${detail.taskArn} was not started by Lisa`);

	const run = await deps.store.getRun(ref.runId);
	if (!run) return ignore(`run ${ref.runId} does not exist`);
	// Without the step in the environment, the step that ran this task is the one that recorded it.
	const step =
		ref.stepIndex !== undefined
			? run.steps[ref.stepIndex]
			: run.steps.find((s) => s.taskId === detail.taskArn);
	if (!step) return ignore(`run ${run.runId} has no step for task ${detail.taskArn}`);
	const attempt = ref.attempt ?? step.attempt;
	if (step.attempt !== attempt)
		return ignore(`task ran attempt ${attempt}; the step is on attempt ${step.attempt}`);
	if (step.status !== "launching" && step.status !== "running")
		return ignore(`step is ${step.status}`);
	if (step.taskId && step.taskId !== detail.taskArn)
		return ignore(`the step's attempt runs as ${step.taskId}, not ${detail.taskArn}`);
	// The task stores its report before sending step.finished: that message is on its way (and the
	// sweeper re-sends it if it is lost), so this stop is the normal end of the task.
	if (step.report?.attempt === attempt) return ignore("the task reported its result");

	const reason = `the agent task stopped without reporting a result: ${describeStop(detail)}`;
	await failAttempt(deps, run.runId, step.index, attempt, {
		event: "step.crashed",
		error: reason,
		transient: true,
		data: {
			attempt,
			taskId: detail.taskArn,
			stopCode: detail.stopCode,
			exitCodes: detail.containers?.map((c) => c.exitCode ?? null),
		},
	});
	return { handled: true, runId: run.runId, stepIndex: step.index, attempt, reason };
}

/** The Lambda handler for the EventBridge rule (src/functions/ecs-events.ts). */
export const ecsEventsHandler = (deps: PipelineDeps) => (event: TaskStateEvent) =>
	handleTaskStateChange(deps, event);
