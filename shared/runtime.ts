import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { cachedConfig } from "./config/cached";
import type { SourceName } from "./config/schema";
import type { ApiDeps } from "./http/deps";
import type { Launcher } from "./launcher/launcher";
import { createLogger, type Logger } from "./log";
import type { PipelineDeps } from "./pipeline/deps";
import { SqsQueue } from "./queue/sqs";
import type { Settings } from "./settings";
import { DynamoStore } from "./store/dynamo";
import { LinearTracker } from "./trackers/linear";
import { NotConfigured, type Tracker } from "./trackers/tracker";

// Wiring: the same adapters for Lambda and the local stack; only the endpoints and launcher differ.

export function awsClients(settings: Settings) {
	const local = settings.dynamoEndpoint || settings.sqsEndpoint;
	// The embedded stack accepts any credentials; AWS uses the default provider chain.
	const credentials = local ? { accessKeyId: "local", secretAccessKey: "local" } : undefined;
	const dynamo = new DynamoDBClient({
		region: settings.region,
		endpoint: settings.dynamoEndpoint,
		credentials,
	});
	const doc = DynamoDBDocumentClient.from(dynamo, {
		marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
	});
	const sqs = new SQSClient({
		region: settings.region,
		endpoint: settings.sqsEndpoint,
		credentials,
	});
	return { dynamo, doc, sqs };
}

/** The store and queue adapters: all a task needs, and the base of the handlers' wiring. */
export function storeAndQueue(settings: Settings): { store: DynamoStore; queue: SqsQueue } {
	const { doc, sqs } = awsClients(settings);
	return {
		store: new DynamoStore(doc, settings.tableName),
		queue: new SqsQueue(sqs, { intake: settings.intakeQueueUrl, events: settings.eventsQueueUrl }),
	};
}

export function trackerFactory(settings: Settings): (source: SourceName) => Tracker {
	const made = new Map<SourceName, Tracker>();
	return (source) => {
		const existing = made.get(source);
		if (existing) return existing;
		let tracker: Tracker;
		switch (source) {
			case "linear":
				if (!settings.linear.apiKey) throw new NotConfigured("LINEAR_API_KEY is not set");
				tracker = LinearTracker.fromEnv(settings.linear.apiKey, settings.linear.apiUrl);
				break;
			default:
				throw new NotConfigured(`the ${source} tracker is not available yet`);
		}
		made.set(source, tracker);
		return tracker;
	};
}

export function baseUrl(settings: Settings): string {
	return settings.publicUrl ?? `http://127.0.0.1:${settings.port}`;
}

export function createDeps(
	settings: Settings,
	opts: { launcher: Launcher; log?: Logger },
): PipelineDeps & ApiDeps {
	const base = baseUrl(settings);
	return {
		settings,
		...storeAndQueue(settings),
		launcher: opts.launcher,
		tracker: trackerFactory(settings),
		config: cachedConfig(settings.configPath),
		log: opts.log ?? createLogger("lisa"),
		now: () => new Date(),
		newRunId: () => ulid(),
		runUrl: (runId) => `${base}/runs/${runId}`,
	};
}
