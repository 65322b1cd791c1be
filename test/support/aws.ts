import {
	DescribeTasksCommand,
	ECSClient,
	RunTaskCommand,
	type RunTaskCommandInput,
	StopTaskCommand,
} from "@aws-sdk/client-ecs";
import {
	DeleteMessageBatchCommand,
	ReceiveMessageCommand,
	SendMessageCommand,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, beforeAll } from "vitest";
import type { AgentLink } from "../../src/config/links";
import { readSettings, type Settings } from "../../src/config/settings";
import { ensureQueue, ensureTable, startEmbeddedAws } from "../../src/local/services";
import type { QueueName } from "../../src/queue/messages";
import { awsClients, storeAndQueue } from "../../src/runtime/aws";
import type { DynamoStore } from "../../src/store/dynamo";

export const REGION = "eu-west-1";
export const ACCOUNT = "123456789012";

export interface QueueOptions {
	visibilityTimeoutSeconds?: number;
	maxReceiveCount?: number;
}

/** In-memory dynalite + fauxqs with Lisa's table and queues, for adapter tests. */
export async function embeddedAws(opts: QueueOptions = {}) {
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
	const queues = { intake, events };

	/** Sends a raw body to a queue (to put a malformed message next to real ones). */
	async function sendRaw(queue: QueueName, body: string) {
		const out = await clients.sqs.send(
			new SendMessageCommand({ QueueUrl: queues[queue].url, MessageBody: body }),
		);
		return out.MessageId ?? "";
	}

	/**
	 * One poll of Lambda's event source mapping: receive what is waiting, invoke the handler with the
	 * batch, delete the records it did not report as failed (all of them with `dropFailed`: their
	 * receive count is spent, they went to the DLQ).
	 */
	async function deliver(
		queue: QueueName,
		handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
		o: { waitSeconds?: number; dropFailed?: boolean } = {},
	): Promise<{ event: SQSEvent; response: SQSBatchResponse }> {
		const q = queues[queue];
		const out = await clients.sqs.send(
			new ReceiveMessageCommand({
				QueueUrl: q.url,
				MaxNumberOfMessages: 10,
				WaitTimeSeconds: o.waitSeconds ?? 0,
				MessageSystemAttributeNames: ["All"],
			}),
		);
		const messages = out.Messages ?? [];
		const event: SQSEvent = {
			Records: messages.map((m) => ({
				messageId: m.MessageId ?? "",
				receiptHandle: m.ReceiptHandle ?? "",
				body: m.Body ?? "",
				attributes: {
					ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? "1",
					SentTimestamp: m.Attributes?.SentTimestamp ?? "",
					SenderId: m.Attributes?.SenderId ?? "AIDAEXAMPLE",
					ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? "",
				},
				messageAttributes: {},
				md5OfBody: m.MD5OfBody ?? "",
				eventSource: "aws:sqs",
				eventSourceARN: q.arn,
				awsRegion: REGION,
			})),
		};
		if (!messages.length) return { event, response: { batchItemFailures: [] } };
		const response = await handler(event);
		const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
		const done = messages.filter((m) => o.dropFailed || !failed.has(m.MessageId ?? ""));
		if (done.length)
			await clients.sqs.send(
				new DeleteMessageBatchCommand({
					QueueUrl: q.url,
					Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
				}),
			);
		return { event, response };
	}

	return { settings, clients, intake, events, sendRaw, deliver, stop: () => aws.stop() };
}

export type EmbeddedAws = Awaited<ReturnType<typeof embeddedAws>>;

export const CLUSTER = `arn:aws:ecs:${REGION}:${ACCOUNT}:cluster/lisa-test-ClusterCluster`;
export const TASK_DEFINITION = `arn:aws:ecs:${REGION}:${ACCOUNT}:task-definition/lisa-test-Agent:4`;
/** What every task ARN of the fake ECS starts with. */
export const TASK_ARN_PREFIX = `${CLUSTER.replace(":cluster/", ":task/")}/`;

/** The agent task as infra/ links it to the functions. */
export const AGENT_LINK: AgentLink = {
	cluster: CLUSTER,
	taskDefinition: TASK_DEFINITION,
	container: "Agent",
	subnets: ["subnet-0a1", "subnet-0b2"],
	securityGroups: ["sg-0c3"],
	assignPublicIp: true,
	capacity: "spot",
};

/** What ECS knows about a task, as DescribeTasks reports it. */
export interface TaskState {
	lastStatus: string;
	stopCode?: string;
	stoppedReason?: string;
	containers?: { name: string; exitCode?: number; reason?: string }[];
}

/**
 * ECS, which nothing emulates offline, as aws-sdk-client-mock: tasks run until stopped or marked
 * stopped; hooks run (once) inside DescribeTasks and StopTask. `mock` takes other answers.
 */
export function fakeEcs() {
	const mock = mockClient(ECSClient);
	const tasks = new Map<string, TaskState>();
	const launched: RunTaskCommandInput[] = [];
	const stopped: string[] = [];
	const hooks: {
		describe?: (taskId: string) => Promise<void>;
		stop?: (taskId: string) => Promise<void>;
	} = {};
	const once = (name: keyof typeof hooks) => {
		const hook = hooks[name];
		delete hooks[name];
		return hook;
	};
	let n = 0;
	let refusals = 0;
	mock.on(RunTaskCommand).callsFake((input: RunTaskCommandInput) => {
		launched.push(input);
		if (refusals > 0) {
			refusals--;
			return { tasks: [], failures: [{ reason: "RESOURCE:MEMORY" }] };
		}
		const taskArn = `${TASK_ARN_PREFIX}task${++n}`;
		tasks.set(taskArn, { lastStatus: "RUNNING" });
		return { tasks: [{ taskArn }] };
	});
	mock.on(DescribeTasksCommand).callsFake(async (input: { tasks: string[] }) => {
		for (const id of input.tasks) await once("describe")?.(id);
		return {
			tasks: input.tasks.flatMap((taskArn) => {
				const t = tasks.get(taskArn);
				return t ? [{ taskArn, ...t }] : [];
			}),
			failures: input.tasks.filter((t) => !tasks.has(t)).map((arn) => ({ arn, reason: "MISSING" })),
		};
	});
	mock.on(StopTaskCommand).callsFake(async (input: { task: string; reason?: string }) => {
		await once("stop")?.(input.task);
		stopped.push(input.task);
		tasks.set(input.task, {
			lastStatus: "STOPPED",
			stopCode: "UserInitiated",
			stoppedReason: input.reason,
		});
		return { task: { taskArn: input.task, lastStatus: "STOPPING" } };
	});
	return {
		mock,
		tasks,
		launched,
		stopped,
		hooks,
		/** The next `count` RunTask calls start nothing (ECS answers with a failure). */
		refuseLaunches(count: number) {
			refusals = count;
		},
		restore: () => mock.restore(),
	};
}

export type FakeEcs = ReturnType<typeof fakeEcs>;

/** The test file's store on embedded AWS: started before its tests (handed to `use`), stopped after. */
export function useEmbeddedStore(use: (store: DynamoStore) => void): void {
	let aws: Awaited<ReturnType<typeof embeddedAws>> | undefined;
	beforeAll(async () => {
		aws = await embeddedAws();
		use(storeAndQueue(aws.settings).store);
	});
	afterAll(() => aws?.stop());
}
