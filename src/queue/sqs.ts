import {
	SendMessageBatchCommand,
	type SendMessageBatchRequestEntry,
	SendMessageCommand,
	type SQSClient,
} from "@aws-sdk/client-sqs";
import { type MessageOf, QUEUES, type QueueName } from "./messages";

export interface Queue {
	/**
	 * Resolves once SQS has the message (durably), rejects when it refused it. `delaySeconds`:
	 * delivered no sooner (at most 900, SQS's limit).
	 */
	send<Q extends QueueName>(
		queue: Q,
		message: MessageOf<Q>,
		opts?: { delaySeconds?: number },
	): Promise<void>;
}

/** SQS's limits on one SendMessageBatch: 10 entries, 256 KiB of bodies together. */
const BATCH_ENTRIES = 10;
const BATCH_BYTES = 256 * 1024;
/** Batches of one queue in flight at once; the sends that come meanwhile wait and go together. */
const IN_FLIGHT = 2;
/**
 * A message sent while others are still on their way waits up to this long for more to share its
 * batch: a batch costs about what one SendMessage costs, so under a burst of webhooks this saves
 * most of the calls. A send made while nothing else is on its way goes at once.
 */
const LINGER_MS = 15;

interface Pending {
	body: string;
	bytes: number;
	resolve(): void;
	reject(err: unknown): void;
}

/**
 * Sends one queue's messages, several in one SendMessageBatch when they come together (concurrent
 * webhooks): a batch costs about what one SendMessage costs. Each send resolves only when SQS
 * accepted its own entry and rejects with that entry's error, so a caller still acknowledges only
 * what is durable. Alone (a Lambda's one request), a message goes out at once with SendMessage.
 */
class Sender {
	private readonly waiting: Pending[] = [];
	private inFlight = 0;
	/** The waiting messages may go: their linger is over (or they never had one). */
	private due = false;
	private timer?: NodeJS.Timeout;

	constructor(
		private readonly client: SQSClient,
		private readonly url: string,
	) {}

	send(body: string): Promise<void> {
		return new Promise((resolve, reject) => {
			// Busy (other sends not yet answered: concurrent callers): the messages of the next few
			// milliseconds go together. Otherwise at once, so one caller's sends in sequence never wait.
			const busy = this.inFlight > 0 || this.waiting.length > 0;
			this.waiting.push({ body, bytes: Buffer.byteLength(body), resolve, reject });
			if (!busy) this.due = true;
			else
				this.timer ??= setTimeout(() => {
					this.timer = undefined;
					this.due = this.waiting.length > 0;
					this.pump();
				}, LINGER_MS);
			this.pump();
		});
	}

	/** Sends what may go: every waiting message once due, else only full batches. */
	private pump(): void {
		while (
			this.inFlight < IN_FLIGHT &&
			(this.waiting.length >= BATCH_ENTRIES || (this.due && this.waiting.length))
		) {
			const batch = this.take();
			if (!this.waiting.length) this.due = false;
			this.inFlight++;
			this.flush(batch).finally(() => {
				this.inFlight--;
				this.pump();
			});
		}
	}

	/** The oldest waiting messages that fit one batch (at least one). */
	private take(): Pending[] {
		const batch: Pending[] = [];
		let bytes = 0;
		while (this.waiting.length && batch.length < BATCH_ENTRIES) {
			const next = this.waiting[0] as Pending;
			if (batch.length && bytes + next.bytes > BATCH_BYTES) break;
			batch.push(next);
			bytes += next.bytes;
			this.waiting.shift();
		}
		return batch;
	}

	private async flush(batch: Pending[]): Promise<void> {
		try {
			if (batch.length === 1) {
				const [one] = batch as [Pending];
				await this.client.send(
					new SendMessageCommand({ QueueUrl: this.url, MessageBody: one.body }),
				);
				one.resolve();
				return;
			}
			const entries: SendMessageBatchRequestEntry[] = batch.map((p, i) => ({
				Id: String(i),
				MessageBody: p.body,
			}));
			const out = await this.client.send(
				new SendMessageBatchCommand({ QueueUrl: this.url, Entries: entries }),
			);
			const sent = new Set((out.Successful ?? []).map((s) => s.Id));
			const failed = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
			for (const [i, p] of batch.entries()) {
				const id = String(i);
				if (sent.has(id)) {
					p.resolve();
					continue;
				}
				const f = failed.get(id);
				p.reject(
					Object.assign(
						new Error(`SQS refused the message: ${f?.Code ?? "no answer"} ${f?.Message ?? ""}`),
						{ name: f?.SenderFault ? "SqsSenderFault" : "SqsBatchEntryFailed" },
					),
				);
			}
		} catch (err) {
			for (const p of batch) p.reject(err);
		}
	}
}

/** SQS adapter: validates before sending so a malformed message never leaves the process. */
export class SqsQueue implements Queue {
	private readonly senders = new Map<QueueName, Sender>();

	constructor(
		private readonly client: SQSClient,
		private readonly urls: Record<QueueName, string>,
	) {}

	async send<Q extends QueueName>(
		queue: Q,
		message: MessageOf<Q>,
		opts: { delaySeconds?: number } = {},
	): Promise<void> {
		const body = JSON.stringify(QUEUES[queue].parse(message));
		// A delayed message (a retry's backoff) is rare and goes alone.
		if (opts.delaySeconds) {
			await this.client.send(
				new SendMessageCommand({
					QueueUrl: this.urls[queue],
					MessageBody: body,
					DelaySeconds: opts.delaySeconds,
				}),
			);
			return;
		}
		let sender = this.senders.get(queue);
		if (!sender) {
			sender = new Sender(this.client, this.urls[queue]);
			this.senders.set(queue, sender);
		}
		await sender.send(body);
	}
}
