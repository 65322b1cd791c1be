import {
	DescribeTasksCommand,
	type ECSClient,
	RunTaskCommand,
	type RunTaskCommandInput,
	StopTaskCommand,
} from "@aws-sdk/client-ecs";
import type { Settings } from "../settings";
import { type Launcher, type LaunchRequest, taskEnvironment } from "./launcher";

export interface EcsTarget {
	cluster: string;
	taskDefinition: string;
	container: string;
	subnets: string[];
	securityGroups: string[];
	assignPublicIp: boolean;
	/** Fargate Spot is cheaper and may be reclaimed; a reclaimed task is retried like a crash. */
	capacity: "fargate" | "spot";
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
		return {
			cluster: this.target.cluster,
			taskDefinition: this.target.taskDefinition,
			count: 1,
			capacityProviderStrategy: [
				{
					capacityProvider: this.target.capacity === "spot" ? "FARGATE_SPOT" : "FARGATE",
					weight: 1,
				},
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
			// Lets the ECS state-change handler find the run and step of a stopped task.
			startedBy: `lisa-${req.runId}`.slice(0, 36),
			tags: [
				{ key: "lisa:run", value: req.runId },
				{ key: "lisa:step", value: String(req.stepIndex) },
				{ key: "lisa:attempt", value: String(req.attempt) },
			],
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

	async stop(taskId: string): Promise<void> {
		await this.ecs.send(
			new StopTaskCommand({
				cluster: this.target.cluster,
				task: taskId,
				reason: "stopped by Lisa",
			}),
		);
	}

	async isAlive(taskId: string): Promise<boolean | undefined> {
		const out = await this.ecs.send(
			new DescribeTasksCommand({ cluster: this.target.cluster, tasks: [taskId] }),
		);
		const task = out.tasks?.[0];
		if (!task) return out.failures?.some((f) => f.reason === "MISSING") ? false : undefined;
		return task.lastStatus !== "STOPPED";
	}
}
