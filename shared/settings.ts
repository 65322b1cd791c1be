import path from "node:path";
import { DEFAULT_CONFIG_PATH } from "./config/load";
import type { EcsTarget } from "./launcher/ecs";

// Runtime settings from the environment (DESIGN §4). Every process reads them here and nowhere else.

export interface Settings {
	port: number;
	configPath: string;
	dataDir: string;
	apiToken?: string;
	publicUrl?: string;
	region: string;
	tableName: string;
	intakeQueueUrl: string;
	eventsQueueUrl: string;
	dynamoEndpoint?: string;
	sqsEndpoint?: string;
	launcher: "local" | "ecs";
	/** Where step tasks run in AWS; undefined when the LISA_ECS_* variables are not set. */
	ecs?: EcsTarget;
	linear: { apiKey?: string; webhookSecret?: string; apiUrl?: string };
	/** botLogin: the login Lisa acts as on GitHub when its token is a GitHub App's (`my-app[bot]`). */
	github: { token?: string; webhookSecret?: string; apiUrl?: string; botLogin?: string };
	trello: { apiKey?: string; token?: string; appSecret?: string; apiUrl?: string };
}

const opt = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());
const list = (v: string | undefined) =>
	(opt(v) ?? "")
		.split(",")
		.map((x) => x.trim())
		.filter(Boolean);

function ecsTarget(env: NodeJS.ProcessEnv): EcsTarget | undefined {
	const cluster = opt(env.LISA_ECS_CLUSTER);
	const taskDefinition = opt(env.LISA_ECS_TASK_DEFINITION);
	if (!cluster || !taskDefinition) return undefined;
	return {
		cluster,
		taskDefinition,
		container: opt(env.LISA_ECS_CONTAINER) ?? "agent",
		subnets: list(env.LISA_ECS_SUBNETS),
		securityGroups: list(env.LISA_ECS_SECURITY_GROUPS),
		assignPublicIp: env.LISA_ECS_PUBLIC_IP !== "false",
		capacity: env.LISA_ECS_CAPACITY === "spot" ? "spot" : "fargate",
	};
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
	const port = Number(env.PORT ?? 8787);
	if (!Number.isInteger(port) || port < 0 || port > 65535)
		throw new Error(`PORT must be a port number, got "${env.PORT}"`);
	return {
		port,
		configPath: opt(env.LISA_CONFIG) ?? DEFAULT_CONFIG_PATH,
		dataDir: path.resolve(opt(env.LISA_DATA_DIR) ?? ".lisa/local"),
		apiToken: opt(env.LISA_API_TOKEN),
		publicUrl: opt(env.LISA_PUBLIC_URL)?.replace(/\/+$/, ""),
		region: opt(env.AWS_REGION) ?? opt(env.AWS_DEFAULT_REGION) ?? "us-east-1",
		tableName: opt(env.LISA_TABLE_NAME) ?? "lisa",
		intakeQueueUrl: opt(env.LISA_INTAKE_QUEUE_URL) ?? "",
		eventsQueueUrl: opt(env.LISA_EVENTS_QUEUE_URL) ?? "",
		dynamoEndpoint: opt(env.LISA_DYNAMODB_ENDPOINT),
		sqsEndpoint: opt(env.LISA_SQS_ENDPOINT),
		launcher: env.LISA_LAUNCHER === "ecs" ? "ecs" : "local",
		ecs: ecsTarget(env),
		linear: {
			apiKey: opt(env.LINEAR_API_KEY),
			webhookSecret: opt(env.LINEAR_WEBHOOK_SECRET),
			apiUrl: opt(env.LINEAR_API_URL),
		},
		github: {
			token: opt(env.GITHUB_TOKEN),
			webhookSecret: opt(env.GITHUB_WEBHOOK_SECRET),
			apiUrl: opt(env.GITHUB_API_URL)?.replace(/\/+$/, ""),
			botLogin: opt(env.GITHUB_BOT_LOGIN),
		},
		trello: {
			apiKey: opt(env.TRELLO_API_KEY),
			token: opt(env.TRELLO_TOKEN),
			appSecret: opt(env.TRELLO_APP_SECRET),
			apiUrl: opt(env.TRELLO_API_URL),
		},
	};
}
