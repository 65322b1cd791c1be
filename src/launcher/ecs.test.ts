import {
	DescribeTasksCommand,
	ECSClient,
	RunTaskCommand,
	StopTaskCommand,
} from "@aws-sdk/client-ecs";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import type { EcsTarget } from "../config/links";
import { readSettings } from "../config/settings";
import { describeStop, EcsLauncher } from "./ecs";

const ecs = mockClient(ECSClient);
afterEach(() => ecs.reset());

const CLUSTER = "arn:aws:ecs:eu-west-1:123456789012:cluster/lisa-prod-ClusterCluster";
const TASK_DEF = "arn:aws:ecs:eu-west-1:123456789012:task-definition/lisa-prod-Agent:7";
const TASK_ARN = "arn:aws:ecs:eu-west-1:123456789012:task/lisa-prod-ClusterCluster/0f1e2d3c4b5a";
const RUN = "01JDX6Z8V3K9Q2M4N5P6R7S8T9";
const REPOS = [{ name: "api", url: "https://ghe.acme.test/acme/api.git", slug: "acme/api" }];

const target = (over: Partial<EcsTarget> = {}): EcsTarget => ({
	cluster: CLUSTER,
	taskDefinition: TASK_DEF,
	container: "Agent",
	subnets: ["subnet-aaa", "subnet-bbb"],
	securityGroups: ["sg-123"],
	assignPublicIp: true,
	capacity: "fargate",
	...over,
});

const settingsEnv = {
	AWS_REGION: "eu-west-1",
	LISA_TABLE_NAME: "lisa-prod-RunsTable",
	LISA_EVENTS_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/lisa-prod-Events",
	GITHUB_API_URL: "https://ghe.acme.test/api/v3",
	GITHUB_TOKEN: "ghp_must_not_be_in_overrides",
	LINEAR_API_KEY: "lin_api_must_not_be_in_overrides",
};
const settings = readSettings(settingsEnv);

const launcher = (over: Partial<EcsTarget> = {}) =>
	new EcsLauncher(new ECSClient({ region: "eu-west-1" }), target(over), settings);

describe("ECS launcher", () => {
	it("runs one Fargate task with the step's environment, network, tags and an idempotency token", async () => {
		ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }] });
		const { taskId } = await launcher().launch({
			runId: RUN,
			stepIndex: 1,
			attempt: 2,
			repos: REPOS,
		});
		expect(taskId).toBe(TASK_ARN);

		const calls = ecs.commandCalls(RunTaskCommand);
		expect(calls).toHaveLength(1);
		const input = calls[0]?.args[0].input;
		expect(input).toMatchObject({
			cluster: CLUSTER,
			taskDefinition: TASK_DEF,
			count: 1,
			capacityProviderStrategy: [{ capacityProvider: "FARGATE", weight: 1 }],
			networkConfiguration: {
				awsvpcConfiguration: {
					subnets: ["subnet-aaa", "subnet-bbb"],
					securityGroups: ["sg-123"],
					assignPublicIp: "ENABLED",
				},
			},
			clientToken: `${RUN}-1-2`,
			startedBy: `lisa-${RUN}`,
			tags: [
				{ key: "lisa:run", value: RUN },
				{ key: "lisa:step", value: "1" },
				{ key: "lisa:attempt", value: "2" },
			],
		});
		// No launch type next to a capacity provider strategy: ECS rejects the pair.
		expect(input?.launchType).toBeUndefined();
		const override = input?.overrides?.containerOverrides?.[0];
		expect(override?.name).toBe("Agent");
		const env = Object.fromEntries((override?.environment ?? []).map((e) => [e.name, e.value]));
		expect(env).toEqual({
			LISA_RUN_ID: RUN,
			LISA_STEP_INDEX: "1",
			LISA_ATTEMPT: "2",
			LISA_TABLE_NAME: "lisa-prod-RunsTable",
			LISA_EVENTS_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/lisa-prod-Events",
			AWS_REGION: "eu-west-1",
			LISA_REPOS: JSON.stringify(REPOS),
			GITHUB_API_URL: "https://ghe.acme.test/api/v3",
		});
		// Credentials reach the task from SSM (infra/agent.ts), never through RunTask overrides.
		expect(JSON.stringify(input)).not.toMatch(/must_not_be_in_overrides/);
	});

	it("with a GitHub App, hands the task the nonce that names its minted token, never a token or the App's key", async () => {
		ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }] });
		const app = readSettings({
			...settingsEnv,
			GITHUB_APP_ID: "4242",
			GITHUB_APP_PRIVATE_KEY:
				"-----BEGIN PRIVATE KEY-----\\nmust_not_be_in_overrides\\n-----END PRIVATE KEY-----",
			GITHUB_APP_INSTALLATION_ID: "77",
		});
		const nonce = "0123456789abcdef0123456789abcdef";
		await new EcsLauncher(new ECSClient({ region: "eu-west-1" }), target(), app).launch({
			runId: RUN,
			stepIndex: 0,
			attempt: 1,
			repos: REPOS,
			stepToken: nonce,
		});
		const input = ecs.commandCalls(RunTaskCommand)[0]?.args[0].input;
		const env = input?.overrides?.containerOverrides?.[0]?.environment ?? [];
		expect(env).toContainEqual({ name: "LISA_STEP_TOKEN", value: nonce });
		expect(JSON.stringify(input)).not.toMatch(/must_not_be_in_overrides|PRIVATE KEY|ghs_/);
	});

	it("puts first attempts on Fargate Spot when configured, and retries on regular Fargate", async () => {
		ecs.on(RunTaskCommand).resolves({ tasks: [{ taskArn: TASK_ARN }] });
		const spot = launcher({ capacity: "spot", assignPublicIp: false });
		await spot.launch({ runId: RUN, stepIndex: 0, attempt: 1, repos: REPOS });
		await spot.launch({ runId: RUN, stepIndex: 0, attempt: 2, repos: REPOS });
		const inputs = ecs.commandCalls(RunTaskCommand).map((c) => c.args[0].input);
		expect(inputs.map((i) => i.capacityProviderStrategy)).toEqual([
			[{ capacityProvider: "FARGATE_SPOT", weight: 1 }],
			[{ capacityProvider: "FARGATE", weight: 1 }],
		]);
		expect(inputs[0]?.networkConfiguration?.awsvpcConfiguration?.assignPublicIp).toBe("DISABLED");
		expect(inputs.map((i) => i.clientToken)).toEqual([`${RUN}-0-1`, `${RUN}-0-2`]);
	});

	it("fails the launch with ECS's reasons when no task was started", async () => {
		ecs.on(RunTaskCommand).resolves({
			tasks: [],
			failures: [{ reason: "Capacity is unavailable at this time", detail: "FARGATE_SPOT" }],
		});
		await expect(
			launcher().launch({ runId: RUN, stepIndex: 0, attempt: 1, repos: REPOS }),
		).rejects.toThrow(
			"ECS did not start the task: Capacity is unavailable at this time (FARGATE_SPOT)",
		);
	});

	it("stops a task in its cluster with the reason", async () => {
		ecs.on(StopTaskCommand).resolves({});
		await launcher().stop(TASK_ARN, "run cancelled: cancelled from the API");
		await launcher().stop(TASK_ARN);
		expect(ecs.commandCalls(StopTaskCommand).map((c) => c.args[0].input)).toEqual([
			{ cluster: CLUSTER, task: TASK_ARN, reason: "run cancelled: cancelled from the API" },
			{ cluster: CLUSTER, task: TASK_ARN, reason: "stopped by Lisa" },
		]);
	});

	it("tells running, stopped, forgotten and unknown tasks apart", async () => {
		ecs
			.on(DescribeTasksCommand)
			.resolvesOnce({ tasks: [{ taskArn: TASK_ARN, lastStatus: "RUNNING" }] })
			.resolvesOnce({ tasks: [{ taskArn: TASK_ARN, lastStatus: "STOPPED" }] })
			.resolvesOnce({ tasks: [], failures: [{ arn: TASK_ARN, reason: "MISSING" }] })
			.resolvesOnce({ tasks: [] });
		const l = launcher();
		const seen = [];
		for (let i = 0; i < 4; i++) seen.push((await l.inspect(TASK_ARN)).alive);
		expect(seen).toEqual([true, false, false, undefined]);
		expect(ecs.commandCalls(DescribeTasksCommand)[0]?.args[0].input).toEqual({
			cluster: CLUSTER,
			tasks: [TASK_ARN],
		});
	});

	it("reports why a stopped task stopped", async () => {
		ecs
			.on(DescribeTasksCommand)
			.resolvesOnce({
				tasks: [
					{
						lastStatus: "STOPPED",
						stopCode: "EssentialContainerExited",
						stoppedReason: "Essential container in task exited",
						containers: [
							{
								name: "Agent",
								exitCode: 137,
								reason: "OutOfMemoryError: Container killed due to memory usage",
							},
						],
					},
				],
			})
			.resolvesOnce({ tasks: [{ lastStatus: "RUNNING" }] });
		const l = launcher();
		expect((await l.inspect(TASK_ARN)).stopReason).toBe(
			"EssentialContainerExited: Essential container in task exited; container Agent: exit code 137, OutOfMemoryError: Container killed due to memory usage",
		);
		expect((await l.inspect(TASK_ARN)).stopReason).toBeUndefined();
	});
});

describe("describeStop", () => {
	it("names the stop code, the reason and each container's exit", () => {
		expect(
			describeStop({
				stopCode: "TaskFailedToStart",
				stoppedReason:
					"CannotPullContainerError: pull image manifest has been retried 5 time(s): not found",
				containers: [{ name: "Agent" }],
			}),
		).toBe(
			"TaskFailedToStart: CannotPullContainerError: pull image manifest has been retried 5 time(s): not found",
		);
		expect(
			describeStop({
				stopCode: "EssentialContainerExited",
				stoppedReason: "Essential container in task exited",
				containers: [{ name: "Agent", exitCode: 1 }],
			}),
		).toBe(
			"EssentialContainerExited: Essential container in task exited; container Agent: exit code 1",
		);
		expect(describeStop({})).toBe("no reason given by ECS");
	});
});
