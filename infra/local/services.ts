import { once } from "node:events";
import type { AddressInfo } from "node:net";
import {
	CreateTableCommand,
	DescribeTableCommand,
	type DynamoDBClient,
	ResourceNotFoundException,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import { createTableInput } from "../../shared/store/table";

// The embedded AWS: dynalite (DynamoDB, on disk) and fauxqs (SQS, in memory), on loopback ports.

export interface EmbeddedAws {
	dynamoEndpoint: string;
	sqsEndpoint: string;
	stop(): Promise<void>;
}

/** `dynamoPath` persists DynamoDB on disk; without it the data lives in memory (tests). */
export async function startEmbeddedAws(dynamoPath?: string): Promise<EmbeddedAws> {
	const dynamo = dynalite({
		path: dynamoPath,
		createTableMs: 0,
		deleteTableMs: 0,
		updateTableMs: 0,
	});
	dynamo.listen(0, "127.0.0.1");
	try {
		await Promise.race([
			once(dynamo, "listening"),
			once(dynamo, "error").then(([err]) => {
				throw err;
			}),
		]);
	} catch (err) {
		throw new Error(
			`could not open the local DynamoDB at ${dynamoPath} (is another Lisa using this data dir?): ${(err as Error).message}`,
		);
	}
	const sqs = await startFauxqs({ port: 0, logger: false });
	return {
		dynamoEndpoint: `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`,
		sqsEndpoint: `http://127.0.0.1:${sqs.port}`,
		async stop() {
			await sqs.stop();
			await new Promise<void>((resolve) => dynamo.close(() => resolve()));
		},
	};
}

export async function ensureTable(client: DynamoDBClient, table: string): Promise<void> {
	try {
		await client.send(new DescribeTableCommand({ TableName: table }));
	} catch (err) {
		if (
			!(err instanceof ResourceNotFoundException) &&
			(err as Error).name !== "ResourceNotFoundException"
		)
			throw err;
		await client.send(new CreateTableCommand(createTableInput(table)));
	}
}

export interface QueuePair {
	url: string;
	arn: string;
	dlqUrl: string;
}

/** A queue and its dead-letter queue, as infra/queues.ts declares them in AWS. */
export async function ensureQueue(
	client: SQSClient,
	name: string,
	opts: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
): Promise<QueuePair> {
	const dlq = await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
	const dlqAttrs = await client.send(
		new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }),
	);
	const queue = await client.send(
		new CreateQueueCommand({
			QueueName: name,
			Attributes: {
				VisibilityTimeout: String(opts.visibilityTimeoutSeconds),
				RedrivePolicy: JSON.stringify({
					deadLetterTargetArn: dlqAttrs.Attributes?.QueueArn,
					maxReceiveCount: opts.maxReceiveCount,
				}),
			},
		}),
	);
	const attrs = await client.send(
		new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ["QueueArn"] }),
	);
	return {
		url: queue.QueueUrl ?? "",
		arn: attrs.Attributes?.QueueArn ?? "",
		dlqUrl: dlq.QueueUrl ?? "",
	};
}
