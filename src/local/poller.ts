import {
	DeleteMessageBatchCommand,
	type Message,
	ReceiveMessageCommand,
	type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { Logger } from "../log";

/**
 * Stands in for Lambda's SQS event source mapping: long-polls a queue, hands batches to the same
 * handler Lambda would invoke, and deletes every record not reported in `batchItemFailures`.
 * Failed records reappear after the visibility timeout; past maxReceiveCount they go to the DLQ.
 */
export class Poller {
	private running = false;
	private loop?: Promise<void>;
	private readonly abort = new AbortController();

	constructor(
		private readonly sqs: SQSClient,
		private readonly queueUrl: string,
		private readonly queueArn: string,
		private readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
		private readonly log: Logger,
		private readonly region: string,
	) {}

	start(): void {
		this.running = true;
		this.loop = this.run();
	}

	async stop(): Promise<void> {
		this.running = false;
		this.abort.abort();
		await this.loop;
	}

	private async run(): Promise<void> {
		while (this.running) {
			try {
				const out = await this.sqs.send(
					new ReceiveMessageCommand({
						QueueUrl: this.queueUrl,
						MaxNumberOfMessages: 10,
						WaitTimeSeconds: 1,
						MessageSystemAttributeNames: ["All"],
					}),
					{ abortSignal: this.abort.signal },
				);
				const messages = out.Messages ?? [];
				if (messages.length) await this.dispatch(messages);
			} catch (err) {
				if (!this.running) return;
				this.log.warn({ err, queue: this.queueUrl }, "receive failed; retrying");
				await new Promise((r) => setTimeout(r, 500));
			}
		}
	}

	private async dispatch(messages: Message[]): Promise<void> {
		const records = messages.map((m) => this.record(m));
		let failed = new Set<string>();
		try {
			const result = await this.handler({ Records: records });
			failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
		} catch (err) {
			// Like Lambda: a handler that throws fails the whole batch.
			this.log.error({ err }, "batch handler threw; the batch will be redelivered");
			return;
		}
		const done = messages.filter((m) => m.MessageId && !failed.has(m.MessageId));
		if (!done.length) return;
		await this.sqs.send(
			new DeleteMessageBatchCommand({
				QueueUrl: this.queueUrl,
				Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
			}),
		);
	}

	private record(m: Message): SQSRecord {
		const a = m.Attributes ?? {};
		return {
			messageId: m.MessageId ?? "",
			receiptHandle: m.ReceiptHandle ?? "",
			body: m.Body ?? "",
			attributes: {
				ApproximateReceiveCount: a.ApproximateReceiveCount ?? "1",
				SentTimestamp: a.SentTimestamp ?? String(Date.now()),
				SenderId: a.SenderId ?? "local",
				ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
			},
			messageAttributes: {},
			md5OfBody: m.MD5OfBody ?? "",
			eventSource: "aws:sqs",
			eventSourceARN: this.queueArn,
			awsRegion: this.region,
		};
	}
}
