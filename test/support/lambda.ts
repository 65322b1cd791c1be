import { randomUUID } from "node:crypto";
import type {
	APIGatewayProxyEventV2,
	APIGatewayProxyStructuredResultV2,
	SQSBatchResponse,
	SQSEvent,
} from "aws-lambda";
import type { QueueName } from "../../src/queue/messages";
import { ACCOUNT, AGENT_LINK, CLUSTER, REGION, TASK_DEFINITION } from "./aws";
import { createWorld, WEBHOOK_SECRET } from "./world";

// Drives the Lambda entry points (functions/*.ts) the way AWS invokes them: API Gateway v2 events,
// SQS batches received from a real queue (fauxqs), EventBridge ECS events. DynamoDB and SQS are
// dynalite and fauxqs in this process; ECS, which nothing emulates offline, is aws-sdk-client-mock.

export const API_TOKEN = "lisa_lambda_test_token_0123456789";
export const PUBLIC_URL = "https://abc123.execute-api.eu-west-1.amazonaws.com";

export type EnvStyle = "sst" | "plain";

/** What infra/ links to the functions; in the "sst" style these are not plain variables. */
const LINKED = [
	"LISA_TABLE_NAME",
	"LISA_INTAKE_QUEUE_URL",
	"LISA_EVENTS_QUEUE_URL",
	"LINEAR_API_KEY",
	"LINEAR_WEBHOOK_SECRET",
];

export async function lambdaWorld(opts: { style: EnvStyle; configExtra?: string }) {
	const w = await createWorld({
		name: "lambda",
		linear: true,
		aws: { visibilityTimeoutSeconds: 30, maxReceiveCount: 3 },
		ecs: true,
		config: { repos: ["api"], extra: opts.configExtra },
	});
	const { aws, linear } = w;
	const { settings } = aws;
	const agent = AGENT_LINK;
	// What infra/ links to the functions, in the form SST gives it...
	const link = (name: string, value: unknown) => ({
		[`SST_RESOURCE_${name}`]: JSON.stringify(value),
	});
	const sst = {
		...Object.fromEntries(Object.entries(w.env).filter(([k]) => !LINKED.includes(k))),
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
		...w.env,
		LISA_LAUNCHER: "ecs",
		LISA_ECS_CLUSTER: agent.cluster,
		LISA_ECS_TASK_DEFINITION: agent.taskDefinition,
		LISA_ECS_CONTAINER: agent.container,
		LISA_ECS_SUBNETS: agent.subnets.join(","),
		LISA_ECS_SECURITY_GROUPS: agent.securityGroups.join(","),
		LISA_ECS_CAPACITY: agent.capacity,
		LISA_API_TOKEN: API_TOKEN,
	};
	const env: NodeJS.ProcessEnv = {
		...(opts.style === "sst" ? sst : plain),
		// Not linked in AWS either: set on the function or implied by the embedded services.
		AWS_LAMBDA_FUNCTION_NAME: "lisa-test-ApiFunction",
		LISA_PUBLIC_URL: PUBLIC_URL,
	};
	const saved = { ...process.env };
	w.onStop(() => {
		for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
		Object.assign(process.env, saved);
	});

	return {
		aws,
		linear,
		ecs: w.ecs,
		env,
		/** Makes `env` the process environment, as Lambda does before it imports a handler. */
		inject() {
			Object.assign(process.env, env);
		},
		sendRaw: aws.sendRaw,
		/** One poll of Lambda's event source mapping (waiting a second for messages). */
		deliver: (queue: QueueName, handler: (event: SQSEvent) => Promise<SQSBatchResponse>) =>
			aws.deliver(queue, handler, { waitSeconds: 1 }),
		stop: w.stop,
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
