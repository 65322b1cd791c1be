import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { Settings } from "../config/settings";
import { SqsQueue } from "../queue/sqs";
import { type DynamoStore, dynamoStore } from "../store/dynamo";

// The AWS clients and the two adapters on them: all the agent task needs, and the base of the
// handlers' wiring (./deps.ts). Kept apart so the task's bundle holds no tracker or HTTP code.

export type { DynamoStore } from "../store/dynamo";

export function awsClients(settings: Settings) {
	const local = settings.dynamoEndpoint || settings.sqsEndpoint;
	// The embedded stack accepts only its own access key; AWS uses the default provider chain.
	const key = settings.localAccessKey ?? "local";
	const credentials = local ? { accessKeyId: key, secretAccessKey: key } : undefined;
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
		store: dynamoStore(doc, settings.tableName),
		queue: new SqsQueue(sqs, { intake: settings.intakeQueueUrl, events: settings.eventsQueueUrl }),
	};
}
