import * as z from "zod";
import { STARTED_BY_PREFIX } from "../config/links";
import { describeStop } from "../launcher/ecs";
import type { PipelineDeps } from "./deps";
import { type StoppedOutcome, taskStopped } from "./task-stopped";

// Crash detection in AWS: EventBridge delivers "ECS Task State Change" for every task of the cluster.
// A Lisa task's STOPPED event goes to taskStopped (./task-stopped.ts), which tells a crash from a
// task's normal end.

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
): Promise<StoppedOutcome> {
	const ignore = (why: string): StoppedOutcome => {
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

	return taskStopped(deps, {
		taskId: detail.taskArn,
		...ref,
		reason: describeStop(detail),
		data: {
			stopCode: detail.stopCode,
			exitCodes: detail.containers?.map((c) => c.exitCode ?? null),
		},
	});
}

/** The Lambda handler for the EventBridge rule (src/functions/ecs-events.ts). */
export const ecsEventsHandler = (deps: PipelineDeps) => (event: TaskStateEvent) =>
	handleTaskStateChange(deps, event);
