import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { buffer } from "node:stream/consumers";
import { ECSClient } from "@aws-sdk/client-ecs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { STARTED_BY_PREFIX } from "../../src/config/links";
import { readSettings } from "../../src/config/settings";
import type { EpicPlan, EpicResearch } from "../../src/domain/epic";
import type { Plan } from "../../src/domain/plan";
import { newRun, type Run, type StepBudget } from "../../src/domain/run";
import type { AttemptUsage } from "../../src/domain/usage";
import { EcsLauncher } from "../../src/launcher/ecs";
import { createLogger } from "../../src/log";
import { eventsHandler, intakeHandler } from "../../src/pipeline/handlers";
import {
	type QueueName,
	type RunRequested,
	runRequested,
	stepFinished,
} from "../../src/queue/messages";
import { awsClients } from "../../src/runtime/aws";
import { createDeps } from "../../src/runtime/deps";
import { dynamoStore } from "../../src/store/dynamo";
import { AGENT_LINK } from "./aws";
import { createWorld, LOG_LEVEL } from "./world";

// The pipeline's handlers (intake, events, sweeper, finalize) in this process, wired as in AWS,
// with a clock the test moves and hooks to force the interleavings that at-least-once delivery,
// crashes and an eventually consistent index produce. Real: dynalite, fauxqs, the Linear double
// (through a loopback gate that can hold or fail chosen GraphQL operations), EcsLauncher. ECS,
// which nothing emulates offline, is aws-sdk-client-mock; DynamoDB faults are SDK middleware.

/** A DynamoDB request as the SDK sends it (command name and input, JSON for matching). */
type Request = { command: string; json: string };
type Match = (req: Request) => boolean;

/**
 * `limits`: the config's limits as YAML flow entries; retries wait no backoff unless they say
 * `retry_backoff_seconds` (tests of the backoff do).
 */
export async function pipelineWorld(
	opts: { configExtra?: string; repos?: string[]; limits?: string } = {},
) {
	const limits = [
		opts.limits?.includes("retry_backoff_seconds") ? "" : "retry_backoff_seconds: 0",
		opts.limits,
	].filter(Boolean);
	const w = await createWorld({
		name: "pipeline",
		linear: true,
		aws: { visibilityTimeoutSeconds: 30, maxReceiveCount: 3 },
		ecs: true,
		config: {
			repos: opts.repos ?? ["api"],
			extra: `limits: {${limits.join(", ")}}\n${opts.configExtra ?? ""}`,
		},
	});
	const { linear, aws, ecs } = w;
	const configText = readFileSync(w.configFile, "utf8");
	let configRevision = 0;
	const gate = await linearGate(linear.url, (n) => linear.failNext(n, { status: 500 }));
	w.onStop(() => gate.stop());
	const settings = readSettings({
		...w.env,
		LISA_PUBLIC_URL: "https://lisa.example.com",
		LINEAR_API_URL: gate.url,
	});
	const launcher = new EcsLauncher(
		new ECSClient({ region: settings.region }),
		AGENT_LINK,
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
	const log = createLogger("lisa-pipeline-test", { LOG_LEVEL });
	const deps = {
		...createDeps(settings, { launcher, log }),
		store,
		now: () => new Date(clock),
		newRunId: () => ulid(clock),
	};
	const intake = intakeHandler(deps);
	const events = eventsHandler(deps);

	/** One poll of a queue, as Lambda's event source mapping does; returns the records handled. */
	async function deliver(queue: QueueName, o: { dropFailed?: boolean } = {}) {
		const { event, response } = await aws.deliver(queue, queue === "intake" ? intake : events, o);
		return { handled: event.Records.length, failed: response.batchItemFailures.length };
	}

	return {
		deps,
		store,
		linear,
		gate,
		ecs,
		settings,
		/** Rewrites the config file's `limits:` line (the handlers read the file when it changes). */
		setConfig(limitsLine: string) {
			const rev = ++configRevision;
			writeFileSync(w.configFile, `${configText.replace(/^limits: .*$/m, limitsLine)}# ${rev}\n`);
			const at = new Date(Date.now() + rev * 1000);
			utimesSync(w.configFile, at, at);
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
				...Object.keys(ecs.hooks).map((h) => `ECS ${h} hook`),
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
			await deps.queue.send(
				"intake",
				runRequested({
					source: "linear",
					issueId: issue.id,
					issueKey: issue.identifier,
					trigger: "api",
					requestedAt: new Date(clock).toISOString(),
					runId,
				}),
			);
		},
		issue: (title: string) => w.issue(title),
		/**
		 * A mention round on `prUrl` of the finished `parent` (repo api), stored as the follow-up
		 * handler stores it; returns the request that starts it through the intake.
		 */
		async createRound(parent: Run, prUrl: string, branch: string): Promise<RunRequested> {
			const runId = deps.newRunId();
			const at = new Date(clock).toISOString();
			const from = { source: parent.source, issueId: parent.issueId, issueKey: parent.issueKey };
			await store.createRun({
				...newRun({ ...from, runId, trigger: "mention", now: at }),
				parentRunId: parent.runId,
				round: { number: 1, prUrl, repo: "api", branch },
				tracker: { acknowledged: true, startComment: true },
			});
			return runRequested({ ...from, trigger: "mention", requestedAt: at, runId });
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
				research?: EpicResearch;
				epicPlan?: EpicPlan;
				error?: string;
				transient?: boolean;
				usage?: AttemptUsage;
				budget?: StepBudget;
			} = {},
			o: { send?: boolean } = {},
		) {
			const spent = { usage: outcome.usage, budget: outcome.budget };
			const result = outcome.error
				? {
						outcome: "failed" as const,
						error: outcome.error,
						transient: outcome.transient,
						...spent,
					}
				: {
						outcome: "succeeded" as const,
						prUrl: outcome.prUrl,
						branch: outcome.branch,
						plan: outcome.plan,
						research: outcome.research,
						epicPlan: outcome.epicPlan,
						...spent,
					};
			const stored = await store.updateStepFields(runId, stepIndex, attempt, {
				report: { ...result, attempt, at: new Date(clock).toISOString() },
				agentState: outcome.error ? "crashed" : "completed",
			});
			if (stored && o.send !== false)
				await deps.queue.send("events", stepFinished({ runId, stepIndex, attempt, ...result }));
			return stored;
		},
		/** The tasks ECS was asked to run for `runId`, in order (their step and attempt). */
		launchesOf(runId: string) {
			return ecs.launched
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
		stop: w.stop,
	};
}

export type PipelineWorld = Awaited<ReturnType<typeof pipelineWorld>>;

function take<T extends { match: Match }>(list: T[], req: Request): T | undefined {
	const i = list.findIndex((f) => f.match(req));
	return i < 0 ? undefined : list.splice(i, 1)[0];
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
