import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import {
	DescribeTasksCommand,
	ECSClient,
	RunTaskCommand,
	type RunTaskCommandInput,
	StopTaskCommand,
} from "@aws-sdk/client-ecs";
import {
	DeleteMessageBatchCommand,
	type Message,
	ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { ulid } from "ulid";
import { STARTED_BY_PREFIX } from "../../src/config/links";
import { readSettings } from "../../src/config/settings";
import type { Plan } from "../../src/domain/plan";
import { EcsLauncher } from "../../src/launcher/ecs";
import { createLogger } from "../../src/log";
import { eventsHandler, intakeHandler } from "../../src/pipeline/handlers";
import type { EventMessage, RunRequested } from "../../src/queue/messages";
import { awsClients } from "../../src/runtime/aws";
import { createDeps } from "../../src/runtime/deps";
import { dynamoStore } from "../../src/store/dynamo";
import { startLinearDouble } from "../doubles/linear/server";
import { embeddedAws } from "./aws";

// The pipeline's handlers (intake, events, sweeper, finalize) in this process, wired as in AWS,
// with a clock the test moves and hooks to force the interleavings that at-least-once delivery,
// crashes and an eventually consistent index produce. Real: dynalite, fauxqs, the Linear double
// (through a loopback gate that can hold or fail chosen GraphQL operations), EcsLauncher. ECS,
// which nothing emulates offline, is aws-sdk-client-mock; DynamoDB faults are SDK middleware.

export const CLUSTER = "arn:aws:ecs:eu-west-1:123456789012:cluster/lisa-test";

/** A DynamoDB request as the SDK sends it (command name and input, JSON for matching). */
type Request = { command: string; json: string };
type Match = (req: Request) => boolean;

/** What ECS knows about a task, as DescribeTasks reports it. */
interface TaskState {
	lastStatus: string;
	stopCode?: string;
	stoppedReason?: string;
}

/**
 * `limits`: the config's limits as YAML flow entries; retries wait no backoff unless they say
 * `retry_backoff_seconds` (tests of the backoff do).
 */
export async function pipelineWorld(
	opts: { configExtra?: string; repos?: string[]; limits?: string } = {},
) {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-pipeline-"));
	const aws = await embeddedAws({ visibilityTimeoutSeconds: 30, maxReceiveCount: 3 });
	const linear = await startLinearDouble();
	linear.state.viewer.name = "Lisa";
	const team = linear.addTeam({ key: "ENG", name: "Engineering" });
	linear.addLabel(team.id, "lisa");
	const gate = await linearGate(linear.url, (n) => linear.failNext(n, { status: 500 }));

	const repos = opts.repos ?? ["api"];
	const configFile = path.join(dir, "config.yaml");
	await writeFile(
		configFile,
		`source: linear
source_config: {team: ENG, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}
repos:
${repos.map((r) => `  - name: ${r}\n    url: https://github.com/acme/${r}.git\n`).join("")}limits: {${[opts.limits?.includes("retry_backoff_seconds") ? "" : "retry_backoff_seconds: 0", opts.limits].filter(Boolean).join(", ")}}
${opts.configExtra ?? ""}`,
	);
	const settings = readSettings({
		...Object.fromEntries(
			Object.entries({
				LISA_TABLE_NAME: aws.settings.tableName,
				LISA_INTAKE_QUEUE_URL: aws.settings.intakeQueueUrl,
				LISA_EVENTS_QUEUE_URL: aws.settings.eventsQueueUrl,
				LISA_DYNAMODB_ENDPOINT: aws.settings.dynamoEndpoint,
				LISA_SQS_ENDPOINT: aws.settings.sqsEndpoint,
				LISA_LOCAL_AWS_KEY: aws.settings.localAccessKey,
				AWS_REGION: "eu-west-1",
				LISA_CONFIG: configFile,
				LISA_PUBLIC_URL: "https://lisa.example.com",
				LINEAR_API_KEY: linear.apiKey,
				LINEAR_API_URL: gate.url,
				LINEAR_WEBHOOK_SECRET: "lin_whs_pipeline_test_0123456789abcdef",
			}).filter((e): e is [string, string] => e[1] !== undefined),
		),
	});

	// ECS: tasks run until stopped or marked stopped; hooks run inside DescribeTasks and StopTask.
	const ecs = mockClient(ECSClient);
	const tasks = new Map<string, TaskState>();
	const launched: RunTaskCommandInput[] = [];
	const stopped: string[] = [];
	const hooks: {
		describe?: (taskId: string) => Promise<void>;
		stop?: (taskId: string) => Promise<void>;
	} = {};
	let n = 0;
	let refusals = 0;
	ecs.on(RunTaskCommand).callsFake((input: RunTaskCommandInput) => {
		launched.push(input);
		if (refusals > 0) {
			refusals--;
			return { tasks: [], failures: [{ reason: "RESOURCE:MEMORY" }] };
		}
		const taskArn = `${CLUSTER.replace(":cluster/", ":task/")}/task${++n}`;
		tasks.set(taskArn, { lastStatus: "RUNNING" });
		return { tasks: [{ taskArn }] };
	});
	ecs.on(DescribeTasksCommand).callsFake(async (input: { tasks: string[] }) => {
		for (const id of input.tasks) await once(hooks, "describe")?.(id);
		return {
			tasks: input.tasks.flatMap((taskArn) => {
				const t = tasks.get(taskArn);
				return t ? [{ taskArn, ...t }] : [];
			}),
			failures: input.tasks.filter((t) => !tasks.has(t)).map((arn) => ({ arn, reason: "MISSING" })),
		};
	});
	ecs.on(StopTaskCommand).callsFake(async (input: { task: string; reason?: string }) => {
		await once(hooks, "stop")?.(input.task);
		stopped.push(input.task);
		tasks.set(input.task, {
			lastStatus: "STOPPED",
			stopCode: "UserInitiated",
			stoppedReason: input.reason,
		});
		return { task: { taskArn: input.task, lastStatus: "STOPPING" } };
	});
	const launcher = new EcsLauncher(
		new ECSClient({ region: settings.region }),
		{
			cluster: CLUSTER,
			taskDefinition: `${CLUSTER.replace(":cluster/lisa-test", ":task-definition/lisa-Agent:1")}`,
			container: "Agent",
			subnets: ["subnet-1"],
			securityGroups: ["sg-1"],
			assignPublicIp: true,
			capacity: "fargate",
		},
		settings,
	);

	// DynamoDB: the handlers' store on a client whose requests can fail, or be followed by a write
	// before their answer arrives (a stale read).
	const faults: { match: Match; error: Error }[] = [];
	const afters: { match: Match; then: () => Promise<void> }[] = [];
	const doc = DynamoDBDocumentClient.from(awsClients(settings).dynamo, {
		marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
	});
	doc.middlewareStack.add(
		(next, context) => async (args) => {
			const req = { command: context.commandName ?? "", json: JSON.stringify(args.input) };
			const fault = take(faults, req);
			if (fault) throw fault.error;
			const out = await next(args);
			await take(afters, req)?.then();
			return out;
		},
		{ step: "initialize", name: "lisaTestFaults" },
	);
	const store = dynamoStore(doc, settings.tableName);

	let clock = Date.now();
	const log = createLogger("lisa-pipeline-test", {
		LOG_LEVEL: process.env.LISA_TEST_LOG ?? "silent",
	});
	const deps = {
		...createDeps(settings, { launcher, log }),
		store,
		now: () => new Date(clock),
		newRunId: () => ulid(clock),
	};
	const intake = intakeHandler(deps);
	const events = eventsHandler(deps);

	/** One poll of a queue, as Lambda's event source mapping does; returns the records handled. */
	async function deliver(queue: "intake" | "events", o: { dropFailed?: boolean } = {}) {
		const q = queue === "intake" ? aws.intake : aws.events;
		const out = await aws.clients.sqs.send(
			new ReceiveMessageCommand({ QueueUrl: q.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
		);
		const messages = out.Messages ?? [];
		if (!messages.length) return { handled: 0, failed: 0 };
		const response: SQSBatchResponse = await (queue === "intake" ? intake : events)(
			sqsEvent(messages, q.arn),
		);
		const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
		// dropFailed: the message is given up on (its receive count is spent; it went to the DLQ).
		const done = messages.filter((m) => o.dropFailed || !failed.has(m.MessageId ?? ""));
		if (done.length)
			await aws.clients.sqs.send(
				new DeleteMessageBatchCommand({
					QueueUrl: q.url,
					Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
				}),
			);
		return { handled: messages.length, failed: failed.size };
	}

	return {
		deps,
		store,
		linear,
		gate,
		ecs: { launched, stopped, tasks, hooks },
		settings,
		/** The next `count` RunTask calls start nothing (ECS answers with a failure). */
		refuseLaunches(count: number) {
			refusals = count;
		},
		/** Moves the handlers' clock on. */
		advance(ms: number) {
			clock += ms;
		},
		now: () => new Date(clock),
		/** Hooks and faults set up but not used yet (a test whose interleaving never happened). */
		unused(): string[] {
			return [
				...faults.map(() => "DynamoDB fault"),
				...afters.map(() => "DynamoDB after-hook"),
				...Object.keys(hooks).map((h) => `ECS ${h} hook`),
				...gate.pending(),
			];
		},
		/**
		 * The next DynamoDB request matching fails with `error` (a crash or timeout at that point).
		 * Requests are matched by the low-level command name (`UpdateItemCommand`) and input JSON.
		 */
		failDynamo(match: Match, error = new Error("Task timed out after 30.00 seconds")) {
			faults.push({ match, error });
		},
		/** After the next request matching, `then` runs before the caller sees the (now stale) answer. */
		afterDynamo(match: Match, then: () => Promise<void>) {
			afters.push({ match, then });
		},
		deliver,
		/** Delivers both queues until they are empty (failed records are dropped: the DLQ). */
		async settle() {
			for (let i = 0; i < 20; i++) {
				const a = await deliver("intake", { dropFailed: true });
				const b = await deliver("events", { dropFailed: true });
				if (!a.handled && !b.handled) return;
			}
			throw new Error("the queues did not settle");
		},
		/** `run.requested` for a Linear issue, as the API sends it. */
		async request(issue: { id: string; identifier: string }, runId: string) {
			const msg: RunRequested = {
				type: "run.requested",
				source: "linear",
				issueId: issue.id,
				issueKey: issue.identifier,
				trigger: "api",
				requestedAt: new Date(clock).toISOString(),
				runId,
			};
			await deps.queue.send("intake", msg);
		},
		issue(title: string) {
			return linear.addIssue({ teamKey: "ENG", title, state: "Todo", labels: ["lisa"] });
		},
		/** What the agent task writes every ~10 s. */
		heartbeat(runId: string, stepIndex: number, attempt: number) {
			return store.updateStepFields(runId, stepIndex, attempt, {
				heartbeatAt: new Date(clock).toISOString(),
				agentState: "in_progress",
			});
		},
		/** What the agent task does when it is done: store its report, then send step.finished. */
		async finishTask(
			runId: string,
			stepIndex: number,
			attempt: number,
			outcome: {
				prUrl?: string;
				branch?: string;
				plan?: Plan;
				error?: string;
				transient?: boolean;
			} = {},
			o: { send?: boolean } = {},
		) {
			const result = outcome.error
				? { outcome: "failed" as const, error: outcome.error, transient: outcome.transient }
				: {
						outcome: "succeeded" as const,
						prUrl: outcome.prUrl,
						branch: outcome.branch,
						plan: outcome.plan,
					};
			const stored = await store.updateStepFields(runId, stepIndex, attempt, {
				report: { ...result, attempt, at: new Date(clock).toISOString() },
				agentState: outcome.error ? "crashed" : "completed",
			});
			if (stored && o.send !== false) {
				const msg: EventMessage = { type: "step.finished", runId, stepIndex, attempt, ...result };
				await deps.queue.send("events", msg);
			}
			return stored;
		},
		/** The tasks ECS was asked to run for `runId`, in order (their step and attempt). */
		launchesOf(runId: string) {
			return launched
				.filter((i) => i.startedBy === `${STARTED_BY_PREFIX}${runId}`)
				.map((i) => {
					const env = new Map(
						i.overrides?.containerOverrides?.[0]?.environment?.map((v) => [v.name, v.value]),
					);
					return {
						step: Number(env.get("LISA_STEP_INDEX")),
						attempt: Number(env.get("LISA_ATTEMPT")),
					};
				});
		},
		comments(issueId: string) {
			return linear.state.comments.filter((c) => c.issueId === issueId).map((c) => c.body);
		},
		async timeline(runId: string) {
			return (await store.listEvents(runId, 200)).items;
		},
		async stop() {
			ecs.restore();
			await gate.stop();
			await linear.stop();
			await aws.stop();
			await rm(dir, { recursive: true, force: true });
		},
	};
}

export type PipelineWorld = Awaited<ReturnType<typeof pipelineWorld>>;

function take<T extends { match: Match }>(list: T[], req: Request): T | undefined {
	const i = list.findIndex((f) => f.match(req));
	return i < 0 ? undefined : list.splice(i, 1)[0];
}

function once<K extends string>(
	hooks: Partial<Record<K, (id: string) => Promise<void>>>,
	name: K,
): ((id: string) => Promise<void>) | undefined {
	const hook = hooks[name];
	delete hooks[name];
	return hook;
}

function sqsEvent(messages: Message[], arn: string): SQSEvent {
	return {
		Records: messages.map((m) => ({
			messageId: m.MessageId ?? "",
			receiptHandle: m.ReceiptHandle ?? "",
			body: m.Body ?? "",
			attributes: {
				ApproximateReceiveCount: "1",
				SentTimestamp: "",
				SenderId: "AIDAEXAMPLE",
				ApproximateFirstReceiveTimestamp: "",
			},
			messageAttributes: {},
			md5OfBody: m.MD5OfBody ?? "",
			eventSource: "aws:sqs",
			eventSourceARN: arn,
			awsRegion: "eu-west-1",
		})),
	};
}

/**
 * A loopback gate in front of the Linear double: the real LinearClient talks to it. It can hold a
 * GraphQL operation until the test releases it, or make it fail as Linear does under load.
 */
async function linearGate(target: string, failNext: (n: number) => void) {
	const rules: { match: RegExp; fail?: boolean; arrived?: () => void; release?: Promise<void> }[] =
		[];
	const server = createServer(async (req, res) => {
		const body = (await buffer(req)).toString("utf8");
		const i = rules.findIndex((r) => r.match.test(body));
		const rule = i < 0 ? undefined : rules.splice(i, 1)[0];
		if (rule?.fail) failNext(1);
		if (rule?.release) {
			rule.arrived?.();
			await rule.release;
		}
		const headers: Record<string, string> = {};
		for (const h of ["authorization", "content-type", "user-agent"]) {
			const v = req.headers[h];
			if (typeof v === "string") headers[h] = v;
		}
		const out = await fetch(target, { method: req.method, headers, body });
		res.writeHead(out.status, { "content-type": out.headers.get("content-type") ?? "text/plain" });
		res.end(Buffer.from(await out.arrayBuffer()));
	});
	await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/graphql`,
		/** The next request whose body matches fails with a 500 (a transient Linear error). */
		failNext(match: RegExp) {
			rules.push({ match, fail: true });
		},
		/** Holds the next request whose body matches; resolves `arrived` when it is held. */
		hold(match: RegExp) {
			let release = () => {};
			let arrived = () => {};
			const held = new Promise<void>((r) => {
				arrived = r;
			});
			rules.push({
				match,
				arrived: () => arrived(),
				release: new Promise<void>((r) => {
					release = r;
				}),
			});
			return { held, release: () => release() };
		},
		pending: () => rules.map((r) => `Linear rule ${r.match}`),
		stop: () => new Promise<void>((r) => server.close(() => r())),
	};
}
