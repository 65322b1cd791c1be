import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { type MessageOf, QUEUES, type QueueName } from "./messages";

export interface Queue {
	/** `delaySeconds`: delivered no sooner (at most 900, SQS's limit). */
	send<Q extends QueueName>(
		queue: Q,
		message: MessageOf<Q>,
		opts?: { delaySeconds?: number },
	): Promise<void>;
}

/** SQS adapter: validates before sending so a malformed message never leaves the process. */
export class SqsQueue implements Queue {
	constructor(
		private readonly client: SQSClient,
		private readonly urls: Record<QueueName, string>,
	) {}

	async send<Q extends QueueName>(
		queue: Q,
		message: MessageOf<Q>,
		opts: { delaySeconds?: number } = {},
	): Promise<void> {
		const body = QUEUES[queue].parse(message);
		await this.client.send(
			new SendMessageCommand({
				QueueUrl: this.urls[queue],
				MessageBody: JSON.stringify(body),
				...(opts.delaySeconds ? { DelaySeconds: opts.delaySeconds } : {}),
			}),
		);
	}
}
