import {
	DeleteMessageCommand,
	GetQueueAttributesCommand,
	ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embeddedAws } from "../../test/support/aws";
import { Poller } from "../local/poller";
import { createLogger } from "../log";
import { awsClients, storeAndQueue } from "../runtime/aws";
import { sqsBatchHandler } from "./batch";
import { runRequestedSchema } from "./messages";
import { SqsQueue } from "./sqs";

const log = createLogger("test");
let aws: Awaited<ReturnType<typeof embeddedAws>>;
let queue: SqsQueue;
beforeAll(async () => {
	aws = await embeddedAws({ visibilityTimeoutSeconds: 1, maxReceiveCount: 2 });
	queue = storeAndQueue(aws.settings).queue;
});
afterAll(() => aws.stop());

const request = (issueId: string) => ({
	type: "run.requested" as const,
	source: "linear" as const,
	issueId,
	trigger: "webhook" as const,
	requestedAt: new Date().toISOString(),
});

const record = (body: string, messageId: string): SQSEvent["Records"][number] => ({
	messageId,
	receiptHandle: messageId,
	body,
	attributes: {
		ApproximateReceiveCount: "1",
		SentTimestamp: "0",
		SenderId: "x",
		ApproximateFirstReceiveTimestamp: "0",
	},
	messageAttributes: {},
	md5OfBody: "",
	eventSource: "aws:sqs",
	eventSourceARN: "arn",
	awsRegion: "us-east-1",
});

describe("messages and the batch handler", () => {
	it("refuses to send an invalid message", async () => {
		await expect(
			queue.send("intake", { ...request("x"), trigger: "carrier-pigeon" } as never),
		).rejects.toThrow();
	});

	it("redelivers only what failed transiently; drops, once and visibly, what can never succeed", async () => {
		const seen: string[] = [];
		const invalid: [string, string][] = [];
		const failed: [unknown, string][] = [];
		const handler = sqsBatchHandler(
			runRequestedSchema,
			async (m) => {
				if (m.issueId === "boom") throw new Error("handler failed");
				if (m.issueId === "broken") throw new TypeError("x is not a function");
				if (m.issueId === "offline")
					throw new TypeError("fetch failed", { cause: new Error("ECONNREFUSED") });
				if (m.issueId === "refused")
					throw Object.assign(new Error("Size of hashkey has exceeded the maximum"), {
						name: "ValidationException",
					});
				seen.push(m.issueId);
			},
			log,
			{
				invalid: async (runId, reason) => {
					invalid.push([runId, reason]);
				},
				failed: async (m, err) => {
					failed.push([(m as { issueId: string }).issueId, (err as Error).name]);
				},
			},
		);
		const runId = ulid();
		const res = await handler({
			Records: [
				record(JSON.stringify(request("ok-1")), "m1"),
				record("{not json", "m2"),
				record(JSON.stringify({ type: "run.requested", runId }), "m3"),
				record(JSON.stringify(request("boom")), "m4"),
				record(JSON.stringify(request("ok-2")), "m5"),
				record(JSON.stringify(request("broken")), "m6"),
				record(JSON.stringify(request("offline")), "m7"),
				record(JSON.stringify(request("refused")), "m8"),
				record(JSON.stringify(request("x".repeat(3000))), "m9"),
			],
		});
		// A plain error, or a network failure: another try may succeed.
		expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(["m4", "m7"]);
		expect(seen.sort()).toEqual(["ok-1", "ok-2"]);
		// An invalid message that names a run says so there.
		expect(invalid).toEqual([[runId, expect.stringMatching(/^source: /)]]);
		expect(failed).toEqual([
			["broken", "TypeError"],
			["refused", "ValidationException"],
		]);
	});
});

describe("sending", () => {
	it("sends concurrent messages together, each acknowledged only once SQS has it", async () => {
		const sqs = awsClients(aws.settings).sqs;
		const commands: string[] = [];
		sqs.middlewareStack.add(
			(next, context) => (args) => {
				commands.push(context.commandName ?? "");
				return next(args);
			},
			{ step: "initialize" },
		);
		const batched = new SqsQueue(sqs, {
			intake: aws.settings.intakeQueueUrl,
			events: aws.settings.eventsQueueUrl,
		});
		// Alone: at once, one SendMessage.
		await batched.send("intake", request("alone"));
		expect(commands).toEqual(["SendMessageCommand"]);
		// Together: in batches of at most 10.
		await Promise.all(
			Array.from({ length: 25 }, (_, i) => batched.send("intake", request(`b${i}`))),
		);
		expect(commands.length).toBeLessThan(10);
		expect(commands).toContain("SendMessageBatchCommand");
		expect(commands.slice(1).every((c) => /^SendMessage(Batch)?Command$/.test(c))).toBe(true);
		const got: string[] = [];
		for (let i = 0; i < 10 && got.length < 26; i++) {
			const out = await aws.clients.sqs.send(
				new ReceiveMessageCommand({ QueueUrl: aws.intake.url, MaxNumberOfMessages: 10 }),
			);
			for (const m of out.Messages ?? []) {
				got.push(JSON.parse(m.Body ?? "{}").issueId);
				await aws.clients.sqs.send(
					new DeleteMessageCommand({ QueueUrl: aws.intake.url, ReceiptHandle: m.ReceiptHandle }),
				);
			}
		}
		expect(got.sort()).toEqual(["alone", ...Array.from({ length: 25 }, (_, i) => `b${i}`)].sort());

		// A refused batch rejects every send in it.
		const nowhere = new SqsQueue(sqs, {
			intake: `${aws.settings.intakeQueueUrl}-missing`,
			events: aws.settings.eventsQueueUrl,
		});
		const results = await Promise.allSettled(
			Array.from({ length: 5 }, (_, i) => nowhere.send("intake", request(`x${i}`))),
		);
		expect(results.map((r) => r.status)).toEqual(Array(5).fill("rejected"));
	});
});

describe("the local poller against fauxqs", () => {
	it("deletes handled messages, redelivers failures, and dead-letters poison after maxReceiveCount", async () => {
		const attempts = new Map<string, number>();
		const handler = sqsBatchHandler(
			runRequestedSchema,
			async (m) => {
				attempts.set(m.issueId, (attempts.get(m.issueId) ?? 0) + 1);
				if (m.issueId === "flaky" && attempts.get("flaky") === 1)
					throw new Error("first try fails");
				if (m.issueId === "poison") throw new Error("always fails");
			},
			log,
		);
		const poller = new Poller(
			aws.clients.sqs,
			aws.intake.url,
			aws.intake.arn,
			handler,
			log,
			"us-east-1",
		);
		poller.start();
		for (const id of ["good", "flaky", "poison"]) await queue.send("intake", request(id));
		const deadline = Date.now() + 15_000;
		let dead: string[] = [];
		while (Date.now() < deadline) {
			const out = await aws.clients.sqs.send(
				new ReceiveMessageCommand({ QueueUrl: aws.intake.dlqUrl, WaitTimeSeconds: 1 }),
			);
			dead = [...dead, ...(out.Messages ?? []).map((m) => JSON.parse(m.Body ?? "{}").issueId)];
			if (dead.length && attempts.get("flaky") === 2) break;
		}
		await poller.stop();
		expect(attempts.get("good")).toBe(1);
		expect(attempts.get("flaky")).toBe(2);
		expect(attempts.get("poison")).toBe(2);
		expect(dead).toEqual(["poison"]);
		const attrs = await aws.clients.sqs.send(
			new GetQueueAttributesCommand({
				QueueUrl: aws.intake.url,
				AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
			}),
		);
		expect(Number(attrs.Attributes?.ApproximateNumberOfMessages)).toBe(0);
		expect(Number(attrs.Attributes?.ApproximateNumberOfMessagesNotVisible)).toBe(0);
	});
});
