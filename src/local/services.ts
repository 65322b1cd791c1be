import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
	CreateTableCommand,
	DescribeTableCommand,
	type DynamoDBClient,
	ResourceNotFoundException,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import dynalite from "dynalite";
import { buildApp } from "fauxqs";
import { createTableInput } from "../store/dynamo/table";

// The embedded AWS: dynalite (DynamoDB, on disk) and fauxqs (SQS, in memory), on loopback ports.
// Neither checks who calls, so both sit behind a check of their own: a request must be signed with
// the access key this start generated, which only the stack and its tasks hold (an agent running
// as another user cannot read it, so it can neither read nor write the runs, nor send a message).

export interface EmbeddedAws {
	dynamoEndpoint: string;
	sqsEndpoint: string;
	/** The only access key the services accept (its id is also its secret). */
	accessKey: string;
	stop(): Promise<void>;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Whether a request is signed (SigV4) with the access key: its id in `Credential=<id>/…`. */
function signedWith(req: IncomingMessage, key: Buffer): boolean {
	const id = /\bCredential=([^/,\s]+)\//.exec(req.headers.authorization ?? "")?.[1];
	return id !== undefined && timingSafeEqual(digest(id), key);
}

function refuse(res: ServerResponse): void {
	res.writeHead(403, { "content-type": "application/x-amz-json-1.0" });
	res.end(
		JSON.stringify({
			__type: "UnrecognizedClientException",
			message: "The request is not signed with the local stack's access key",
		}),
	);
}

/** `dynamoPath` persists DynamoDB on disk; without it the data lives in memory (tests). */
export async function startEmbeddedAws(dynamoPath?: string): Promise<EmbeddedAws> {
	const accessKey = `LISA${randomBytes(24).toString("hex").toUpperCase()}`;
	const key = digest(accessKey);
	const dynamo = dynalite({
		path: dynamoPath,
		createTableMs: 0,
		deleteTableMs: 0,
		updateTableMs: 0,
	});
	const [serve] = dynamo.listeners("request") as RequestListener[];
	dynamo.removeAllListeners("request");
	dynamo.on("request", (req: IncomingMessage, res: ServerResponse) =>
		signedWith(req, key) ? serve?.(req, res) : refuse(res),
	);
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
	// fauxqs's own start listens on every interface: its app is served on loopback here instead.
	const sqs = buildApp({ logger: false });
	sqs.addHook(
		"onRequest",
		async (req: { raw: IncomingMessage }, reply: { raw: ServerResponse; hijack(): void }) => {
			if (signedWith(req.raw, key)) return;
			reply.hijack();
			refuse(reply.raw);
		},
	);
	const sqsUrl = await sqs.listen({ port: 0, host: "127.0.0.1" });
	return {
		dynamoEndpoint: `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`,
		sqsEndpoint: sqsUrl,
		accessKey,
		async stop() {
			await sqs.close();
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
