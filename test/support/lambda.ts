import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ECSClient, RunTaskCommand } from "@aws-sdk/client-ecs";
import {
	DeleteMessageBatchCommand,
	ReceiveMessageCommand,
	SendMessageCommand,
} from "@aws-sdk/client-sqs";
import type {
	APIGatewayProxyEventV2,
	APIGatewayProxyStructuredResultV2,
	SQSBatchResponse,
	SQSEvent,
} from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import type { AgentLink } from "../../src/config/links";
import { startLinearDouble } from "../doubles/linear/server";
import { embeddedAws } from "./aws";

// Drives the Lambda entry points (functions/*.ts) the way AWS invokes them: API Gateway v2 events,
// SQS batches received from a real queue (fauxqs), EventBridge ECS events. DynamoDB and SQS are
// dynalite and fauxqs in this process; ECS, which nothing emulates offline, is aws-sdk-client-mock.

export const API_TOKEN = "lisa_lambda_test_token_0123456789";
export const WEBHOOK_SECRET = "lin_whs_lambda_test_0123456789abcdef";
export const ACCOUNT = "123456789012";
export const REGION = "eu-west-1";
export const CLUSTER = `arn:aws:ecs:${REGION}:${ACCOUNT}:cluster/lisa-test-ClusterCluster`;
export const TASK_DEFINITION = `arn:aws:ecs:${REGION}:${ACCOUNT}:task-definition/lisa-test-Agent:4`;
export const PUBLIC_URL = "https://abc123.execute-api.eu-west-1.amazonaws.com";

export type EnvStyle = "sst" | "plain";

export async function lambdaWorld(opts: { style: EnvStyle; configExtra?: string }) {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-lambda-"));
	const aws = await embeddedAws({ visibilityTimeoutSeconds: 30, maxReceiveCount: 3 });
	const linear = await startLinearDouble();
	linear.state.viewer.name = "Lisa";
	const team = linear.addTeam({ key: "ENG", name: "Engineering" });
	linear.addLabel(team.id, "lisa");
	const configFile = path.join(dir, "config.yaml");
	await writeFile(
		configFile,
		`source: linear
source_config: {team: ENG, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}
repos:
  - name: api
    url: https://github.com/acme/api.git
${opts.configExtra ?? ""}`,
	);

	const ecs = mockClient(ECSClient);
	let tasks = 0;
	ecs.on(RunTaskCommand).callsFake(() => ({
		tasks: [{ taskArn: `${CLUSTER.replace(":cluster/", ":task/")}/task${++tasks}` }],
	}));

	const agent: AgentLink = {
		cluster: CLUSTER,
		taskDefinition: TASK_DEFINITION,
		container: "Agent",
		subnets: ["subnet-0a1", "subnet-0b2"],
		securityGroups: ["sg-0c3"],
		assignPublicIp: true,
		capacity: "spot",
	};
	const { settings } = aws;
	// What infra/ links to the functions, in the form SST gives it...
	const link = (name: string, value: unknown) => ({
		[`SST_RESOURCE_${name}`]: JSON.stringify(value),
	});
	const sst = {
		...link("App", { name: "lisa", stage: "test" }),
		...link("Table", { name: settings.tableName }),
		...link("IntakeQueue", { url: settings.intakeQueueUrl }),
		...link("EventsQueue", { url: settings.eventsQueueUrl }),
		...link("AgentTask", agent),
		...link("ApiToken", { value: API_TOKEN }),
		...link("LinearApiKey", { value: linear.apiKey }),
		...link("LinearWebhookSecret", { value: WEBHOOK_SECRET }),
		...link("GithubWebhookSecret", { value: "" }),
	};
	// ...or as plain variables (the same settings, for the handlers).
	const plain = {
		LISA_TABLE_NAME: settings.tableName,
		LISA_INTAKE_QUEUE_URL: settings.intakeQueueUrl,
		LISA_EVENTS_QUEUE_URL: settings.eventsQueueUrl,
		LISA_LAUNCHER: "ecs",
		LISA_ECS_CLUSTER: agent.cluster,
		LISA_ECS_TASK_DEFINITION: agent.taskDefinition,
		LISA_ECS_CONTAINER: agent.container,
		LISA_ECS_SUBNETS: agent.subnets.join(","),
		LISA_ECS_SECURITY_GROUPS: agent.securityGroups.join(","),
		LISA_ECS_CAPACITY: agent.capacity,
		LISA_API_TOKEN: API_TOKEN,
		LINEAR_API_KEY: linear.apiKey,
		LINEAR_WEBHOOK_SECRET: WEBHOOK_SECRET,
	};
	const env: Record<string, string> = {
		...(opts.style === "sst" ? sst : plain),
		// Not linked in AWS either: set on the function or implied by the embedded services.
		AWS_REGION: REGION,
		AWS_LAMBDA_FUNCTION_NAME: "lisa-test-ApiFunction",
		LISA_DYNAMODB_ENDPOINT: settings.dynamoEndpoint ?? "",
		LISA_SQS_ENDPOINT: settings.sqsEndpoint ?? "",
		LISA_LOCAL_AWS_KEY: settings.localAccessKey ?? "",
		LISA_CONFIG: configFile,
		LISA_PUBLIC_URL: PUBLIC_URL,
		LINEAR_API_URL: linear.url,
		LOG_LEVEL: process.env.LISA_TEST_LOG ?? "silent",
	};

	const queues = { intake: aws.intake, events: aws.events };
	const saved = { ...process.env };

	return {
		aws,
		linear,
		ecs,
		env,
		configFile,
		/** Makes `env` the process environment, as Lambda does before it imports a handler. */
		inject() {
			Object.assign(process.env, env);
		},
		/** Sends a raw body to a queue (to put a malformed message next to real ones). */
		async sendRaw(queue: keyof typeof queues, body: string) {
			const out = await aws.clients.sqs.send(
				new SendMessageCommand({ QueueUrl: queues[queue].url, MessageBody: body }),
			);
			return out.MessageId ?? "";
		},
		/**
		 * One poll of Lambda's event source mapping: receive what is waiting, invoke the handler with
		 * the batch, delete the records it did not report as failed.
		 */
		async deliver(
			queue: keyof typeof queues,
			handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
		): Promise<{ event: SQSEvent; response: SQSBatchResponse }> {
			const q = queues[queue];
			const out = await aws.clients.sqs.send(
				new ReceiveMessageCommand({
					QueueUrl: q.url,
					MaxNumberOfMessages: 10,
					WaitTimeSeconds: 1,
					MessageSystemAttributeNames: ["All"],
				}),
			);
			const event: SQSEvent = {
				Records: (out.Messages ?? []).map((m) => ({
					messageId: m.MessageId ?? "",
					receiptHandle: m.ReceiptHandle ?? "",
					body: m.Body ?? "",
					attributes: {
						ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? "1",
						SentTimestamp: m.Attributes?.SentTimestamp ?? "",
						SenderId: m.Attributes?.SenderId ?? "AIDAEXAMPLE",
						ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? "",
					},
					messageAttributes: {},
					md5OfBody: m.MD5OfBody ?? "",
					eventSource: "aws:sqs",
					eventSourceARN: q.arn,
					awsRegion: REGION,
				})),
			};
			const response = await handler(event);
			const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
			const done = (out.Messages ?? []).filter((m) => !failed.has(m.MessageId ?? ""));
			if (done.length)
				await aws.clients.sqs.send(
					new DeleteMessageBatchCommand({
						QueueUrl: q.url,
						Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
					}),
				);
			return { event, response };
		},
		async stop() {
			ecs.restore();
			for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
			Object.assign(process.env, saved);
			await linear.stop();
			await aws.stop();
			await rm(dir, { recursive: true, force: true });
		},
	};
}

export type LambdaWorld = Awaited<ReturnType<typeof lambdaWorld>>;

/** An HTTP API (payload format 2.0) request, as API Gateway and function URLs deliver it. */
export function httpEvent(
	method: string,
	pathAndQuery: string,
	init: { headers?: Record<string, string>; body?: string } = {},
): APIGatewayProxyEventV2 {
	const [rawPath = "/", rawQueryString = ""] = pathAndQuery.split("?");
	const now = new Date();
	const headers: Record<string, string> = {
		accept: "*/*",
		host: new URL(PUBLIC_URL).host,
		"user-agent": "lisa-test",
		"x-forwarded-for": "203.0.113.7",
		"x-forwarded-port": "443",
		"x-forwarded-proto": "https",
		...Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
	};
	if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
	return {
		version: "2.0",
		routeKey: "$default",
		rawPath,
		rawQueryString,
		headers,
		queryStringParameters: rawQueryString
			? Object.fromEntries(new URLSearchParams(rawQueryString))
			: undefined,
		requestContext: {
			accountId: ACCOUNT,
			apiId: "abc123",
			domainName: new URL(PUBLIC_URL).host,
			domainPrefix: "abc123",
			http: {
				method,
				path: rawPath,
				protocol: "HTTP/1.1",
				sourceIp: "203.0.113.7",
				userAgent: "lisa-test",
			},
			requestId: randomUUID(),
			routeKey: "$default",
			stage: "$default",
			time: now.toUTCString(),
			timeEpoch: now.getTime(),
		},
		body: init.body,
		isBase64Encoded: false,
	};
}

export function jsonBody<T = Record<string, unknown>>(res: APIGatewayProxyStructuredResultV2): T {
	return JSON.parse(res.body ?? "null") as T;
}

/** An EventBridge "ECS Task State Change" for a task Lisa started, with what ECS reports. */
export function taskStateChange(input: {
	taskArn: string;
	runId: string;
	stepIndex: number;
	attempt: number;
	lastStatus?: string;
	stopCode?: string;
	stoppedReason?: string;
	exitCode?: number;
	containerReason?: string;
	/** Leave the Lisa environment out of the overrides (only `startedBy` identifies the run). */
	withoutEnv?: boolean;
}) {
	const now = new Date().toISOString();
	const lastStatus = input.lastStatus ?? "STOPPED";
	return {
		version: "0",
		id: randomUUID(),
		"detail-type": "ECS Task State Change",
		source: "aws.ecs",
		account: ACCOUNT,
		time: now,
		region: REGION,
		resources: [input.taskArn],
		detail: {
			attachments: [{ id: randomUUID(), type: "eni", status: "DELETED", details: [] }],
			availabilityZone: `${REGION}a`,
			capacityProviderName: "FARGATE_SPOT",
			clusterArn: CLUSTER,
			connectivity: "CONNECTED",
			containers: [
				{
					containerArn: `${CLUSTER.replace(":cluster/", ":container/")}/${randomUUID()}`,
					exitCode: input.exitCode,
					lastStatus,
					name: "Agent",
					reason: input.containerReason,
					taskArn: input.taskArn,
					networkInterfaces: [],
					cpu: "0",
				},
			],
			cpu: "2048",
			createdAt: now,
			desiredStatus: "STOPPED",
			enableExecuteCommand: false,
			group: "family:lisa-test-Agent",
			launchType: "FARGATE",
			lastStatus,
			memory: "4096",
			overrides: {
				containerOverrides: [
					{
						name: "Agent",
						environment: input.withoutEnv
							? []
							: [
									{ name: "LISA_RUN_ID", value: input.runId },
									{ name: "LISA_STEP_INDEX", value: String(input.stepIndex) },
									{ name: "LISA_ATTEMPT", value: String(input.attempt) },
								],
					},
				],
			},
			platformVersion: "1.4.0",
			startedBy: `lisa-${input.runId}`,
			stopCode: input.stopCode,
			stoppedAt: lastStatus === "STOPPED" ? now : undefined,
			stoppedReason: input.stoppedReason,
			stoppingAt: now,
			taskArn: input.taskArn,
			taskDefinitionArn: TASK_DEFINITION,
			updatedAt: now,
			version: 5,
		},
	};
}

export interface ApiInit {
	body?: unknown;
	/** null: no Authorization header; default: the API token. */
	token?: string | null;
	headers?: Record<string, string>;
}

/** Invokes the API entry point (src/functions/api.ts) with an HTTP API event; returns its result. */
export async function callApi<H extends (event: never) => Promise<unknown>>(
	handler: H,
	method: string,
	path: string,
	init: ApiInit = {},
): Promise<APIGatewayProxyStructuredResultV2> {
	const headers: Record<string, string> = { ...init.headers };
	if (init.token !== null) headers.authorization = `Bearer ${init.token ?? API_TOKEN}`;
	let body: string | undefined;
	if (init.body !== undefined) {
		body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
		headers["content-type"] ??= "application/json";
	}
	// hono/aws-lambda's own event type differs from @types/aws-lambda's (body null vs absent, an
	// authorizer always present); the handler reads neither difference.
	const event = httpEvent(method, path, { headers, body }) as unknown as Parameters<H>[0];
	return (await handler(event)) as APIGatewayProxyStructuredResultV2;
}

/** A run as GET /api/runs/:id shows it. */
export interface ApiRun {
	id: string;
	status: string;
	error?: string;
	steps: { status: string; attempt: number; taskId?: string; prUrl?: string; error?: string }[];
	links: { dashboard: string };
}
