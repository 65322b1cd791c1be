import path from "node:path";
import { DEFAULT_CONFIG_PATH } from "./config/load";

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
	linear: { apiKey?: string; webhookSecret?: string; apiUrl?: string };
	github: { token?: string; webhookSecret?: string; apiUrl?: string };
	trello: { apiKey?: string; token?: string; appSecret?: string; apiUrl?: string };
}

const opt = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());

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
		linear: {
			apiKey: opt(env.LINEAR_API_KEY),
			webhookSecret: opt(env.LINEAR_WEBHOOK_SECRET),
			apiUrl: opt(env.LINEAR_API_URL),
		},
		github: {
			token: opt(env.GITHUB_TOKEN),
			webhookSecret: opt(env.GITHUB_WEBHOOK_SECRET),
			apiUrl: opt(env.GITHUB_API_URL)?.replace(/\/+$/, ""),
		},
		trello: {
			apiKey: opt(env.TRELLO_API_KEY),
			token: opt(env.TRELLO_TOKEN),
			appSecret: opt(env.TRELLO_APP_SECRET),
			apiUrl: opt(env.TRELLO_API_URL),
		},
	};
}
