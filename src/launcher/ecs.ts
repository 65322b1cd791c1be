import {
	DescribeTasksCommand,
	type ECSClient,
	RunTaskCommand,
	type RunTaskCommandInput,
	StopTaskCommand,
} from "@aws-sdk/client-ecs";
import { type EcsTarget, STARTED_BY_PREFIX } from "../config/links";
import type { Settings } from "../config/settings";
import { type Launcher, type LaunchRequest, type TaskStatus, taskEnvironment } from "./launcher";

/** Tags on every task, so the console, the bill and the ECS events name the run and step. */
const TASK_TAGS = { run: "lisa:run", step: "lisa:step", attempt: "lisa:attempt" } as const;

/** What ECS says about a stopped task (DescribeTasks and the task state-change event alike). */
interface StoppedTask {
	stopCode?: string;
	stoppedReason?: string;
	containers?: { name?: string; exitCode?: number; reason?: string }[];
}

/** One line saying why a task stopped: the stop code and reason, then each container's exit. */
export function describeStop(task: StoppedTask): string {
	const parts: string[] = [];
	const head = [task.stopCode, task.stoppedReason].filter(Boolean).join(": ");
	if (head) parts.push(head);
	for (const c of task.containers ?? []) {
		const exit = [
			c.exitCode !== undefined && c.exitCode !== null ? `exit code ${c.exitCode}` : "",
			c.reason ?? "",
		].filter(Boolean);
		if (exit.length) parts.push(`container ${c.name ?? "?"}: ${exit.join(", ")}`);
	}
	return parts.join("; ") || "no reason given by ECS";
}

/** Launches each step as an ECS Fargate task with the step's environment as a container override. */
export class EcsLauncher implements Launcher {
	constructor(
		private readonly ecs: ECSClient,
		private readonly target: EcsTarget,
		private readonly settings: Settings,
	) {}

	runTaskInput(req: LaunchRequest): RunTaskCommandInput {
		const env = taskEnvironment(req, this.settings);
		const spot = this.target.capacity === "spot" && req.attempt === 1;
		return {
			cluster: this.target.cluster,
			taskDefinition: this.target.taskDefinition,
			count: 1,
			capacityProviderStrategy: [
				{ capacityProvider: spot ? "FARGATE_SPOT" : "FARGATE", weight: 1 },
			],
			networkConfiguration: {
				awsvpcConfiguration: {
					subnets: this.target.subnets,
					securityGroups: this.target.securityGroups,
					assignPublicIp: this.target.assignPublicIp ? "ENABLED" : "DISABLED",
				},
			},
			overrides: {
				containerOverrides: [
					{
						name: this.target.container,
						environment: Object.entries(env).map(([name, value]) => ({ name, value })),
					},
				],
			},
			// The SDK retries a timed-out RunTask; the token makes that retry return the same task.
			clientToken: `${req.runId}-${req.stepIndex}-${req.attempt}`,
			startedBy: `${STARTED_BY_PREFIX}${req.runId}`,
			tags: [
				{ key: TASK_TAGS.run, value: req.runId },
				{ key: TASK_TAGS.step, value: String(req.stepIndex) },
				{ key: TASK_TAGS.attempt, value: String(req.attempt) },
			],
			enableECSManagedTags: true,
			propagateTags: "TASK_DEFINITION",
		};
	}

	async launch(req: LaunchRequest): Promise<{ taskId: string }> {
		const out = await this.ecs.send(new RunTaskCommand(this.runTaskInput(req)));
		const arn = out.tasks?.[0]?.taskArn;
		if (!arn) {
			const reason = out.failures
				?.map((f) => `${f.reason ?? "failure"}${f.detail ? ` (${f.detail})` : ""}`)
				.join("; ");
			throw new Error(`ECS did not start the task: ${reason || "no task returned"}`);
		}
		return { taskId: arn };
	}

	async stop(taskId: string, reason = "stopped by Lisa"): Promise<void> {
		await this.ecs.send(
			new StopTaskCommand({
				cluster: this.target.cluster,
				task: taskId,
				// Shown in the console and in the task's STOPPED event (ECS caps it at 255 characters).
				reason: reason.slice(0, 255),
			}),
		);
	}

	async inspect(taskId: string): Promise<TaskStatus> {
		const out = await this.ecs.send(
			new DescribeTasksCommand({ cluster: this.target.cluster, tasks: [taskId] }),
		);
		const task = out.tasks?.[0];
		// ECS forgets stopped tasks after about an hour: gone, with nothing to tell.
		if (!task)
			return { alive: out.failures?.some((f) => f.reason === "MISSING") ? false : undefined };
		if (task.lastStatus !== "STOPPED") return { alive: true };
		return { alive: false, stopReason: describeStop(task) };
	}
}
