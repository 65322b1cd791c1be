import { readSettings, type Settings } from "../../src/config/settings";
import { ensureQueue, ensureTable, startEmbeddedAws } from "../../src/local/services";
import { awsClients } from "../../src/runtime/aws";

/** In-memory dynalite + fauxqs with Lisa's table and queues, for adapter tests. */
export async function embeddedAws(
	opts: { visibilityTimeoutSeconds?: number; maxReceiveCount?: number } = {},
) {
	const aws = await startEmbeddedAws();
	const base = readSettings({ LISA_TABLE_NAME: "lisa-test" });
	const partial: Settings = {
		...base,
		dynamoEndpoint: aws.dynamoEndpoint,
		sqsEndpoint: aws.sqsEndpoint,
		localAccessKey: aws.accessKey,
	};
	const clients = awsClients(partial);
	await ensureTable(clients.dynamo, partial.tableName);
	const q = {
		visibilityTimeoutSeconds: opts.visibilityTimeoutSeconds ?? 30,
		maxReceiveCount: opts.maxReceiveCount ?? 5,
	};
	const intake = await ensureQueue(clients.sqs, "lisa-intake", q);
	const events = await ensureQueue(clients.sqs, "lisa-events", q);
	const settings: Settings = { ...partial, intakeQueueUrl: intake.url, eventsQueueUrl: events.url };
	return { settings, clients, intake, events, stop: () => aws.stop() };
}
