import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { createApp } from "../api/app";
import { SignInCodes } from "../api/sign-in";
import { readSettings, type Settings } from "../config/settings";
import { createLogger, type Logger } from "../log";
import { eventsHandler, intakeHandler } from "../pipeline/handlers";
import { type SweepReport, sweep } from "../pipeline/sweeper";
import { taskStopped } from "../pipeline/task-stopped";
import { REDRIVE } from "../queue/redrive";
import { awsClients } from "../runtime/aws";
import { createDeps, type RuntimeDeps } from "../runtime/deps";
import { type AgentReach, agentReach } from "./agent-reach";
import { AgentUidPool, agentUidRange, type UidRange } from "./agent-users";
import { holdDataDir, listen, StartRefused, sayHolder } from "./claims";
import { ContainerLauncher } from "./container/launcher";
import { onPath } from "./container/runtime";
import { containerLauncher } from "./container/setup";
import { LocalLauncher, prepareDataDir } from "./launcher";
import { Poller } from "./poller";
import { ensureQueue, ensureTable, startEmbeddedAws } from "./services";

export interface LocalStackOptions {
	env?: NodeJS.ProcessEnv;
	log?: Logger;
	/** How often the sweeper runs (default 30 s). */
	sweepIntervalMs?: number;
	/** Seconds before a failed queue message is delivered again (default 30). */
	visibilityTimeoutSeconds?: number;
	/** false: serve the API only, without pollers and sweeper (the ingest benchmark). */
	workers?: boolean;
}

export interface LocalStack {
	url: string;
	/** The admin token of /api/*. */
	apiToken: string;
	/** The read-only token of /api/* (dashboards). */
	readToken: string;
	/** A dashboard link (`path`, default `/`) that signs in once with a fresh code, never the token. */
	signInLink(path?: string): string;
	settings: Settings;
	/** The agents' uids (one per running step), or none: agents run as the stack's own user. */
	agentUids?: UidRange;
	/**
	 * Each agent runs in a network of its own (with agent uids, under either launcher;
	 * docs/security.md › Security).
	 */
	agentsConfined: boolean;
	/** Where the agents work and what they run (agent-reach.ts). */
	agentReach: AgentReach;
	/** Where each step runs, one line (the launcher). */
	tasks: string;
	/** The task image and its agent CLIs, when steps run in containers of it. */
	image?: { name: string; clis: readonly string[] };
	deps: RuntimeDeps;
	sweep(): Promise<SweepReport>;
	stop(): Promise<void>;
}

/** A token given in the environment, else generated once and kept (0600) in the data dir. */
function token(given: string | undefined, dataDir: string, file: string): string {
	if (given) return given;
	const at = path.join(dataDir, file);
	try {
		return readFileSync(at, "utf8").trim();
	} catch {
		const made = `lisa_${randomBytes(24).toString("base64url")}`;
		writeFileSync(at, `${made}\n`, { mode: 0o600 });
		return made;
	}
}

/**
 * The whole local stack (README › Quick start) in one process: dynalite on disk, fauxqs, pollers invoking the Lambda
 * handlers, the local launcher, the sweeper on a timer, and the Hono app on 127.0.0.1. What the
 * start can know is wrong (the data dir or the port taken, a setting) throws StartRefused.
 */
export async function startLocalStack(opts: LocalStackOptions = {}): Promise<LocalStack> {
	const env = opts.env ?? process.env;
	const log = opts.log ?? createLogger("lisa", env);
	let base: Settings;
	let uidRange: UidRange | undefined;
	try {
		base = readSettings(env);
		uidRange = agentUidRange(env.LISA_AGENT_UIDS);
	} catch (err) {
		throw new StartRefused((err as Error).message);
	}
	mkdirSync(base.dataDir, { recursive: true });
	const cleanups: (() => Promise<unknown>)[] = [];
	const undo = async () => {
		for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
	};
	try {
		// Undone in reverse: the server stops taking requests before the store they need stops.
		const lock = await holdDataDir(base.dataDir);
		cleanups.push(() => lock.release());
		const aws = await startEmbeddedAws(path.join(base.dataDir, "dynamodb"));
		cleanups.push(() => aws.stop());
		let app: Hono | undefined;
		const server = await listen(base.port, (req) =>
			app ? app.fetch(req) : new Response("starting", { status: 503 }),
		);
		cleanups.push(() => closeServer(server));
		const reach = await agentReach({
			dataDir: base.dataDir,
			otherUids: uidRange !== undefined,
			pathVar: env.PATH,
		}).catch((err: Error) => {
			throw new StartRefused(err.message);
		});
		// As root each child task puts its agent in a network namespace of its own (egress/namespace.ts).
		const missing = ["unshare", "nsenter", "ip"].filter((c) => !onPath(c, env.PATH));
		if (uidRange && base.launcher !== "container" && missing.length)
			throw new StartRefused(
				`as root each agent runs in a network of its own, which needs ${missing.join(", ")}: install util-linux and iproute2 (apt-get install util-linux iproute2), or set LISA_AGENT_UIDS=off`,
			);
		await prepareDataDir(base.dataDir, reach.workspaces, uidRange !== undefined);
		const port = (server.address() as AddressInfo).port;
		const url = `http://127.0.0.1:${port}`;
		cleanups.push(await sayHolder(base.dataDir, url));
		const partial: Settings = {
			...base,
			port,
			publicUrl: base.publicUrl ?? url,
			dynamoEndpoint: aws.dynamoEndpoint,
			sqsEndpoint: aws.sqsEndpoint,
			localAccessKey: aws.accessKey,
		};
		const clients = awsClients(partial);
		await ensureTable(clients.dynamo, partial.tableName);
		const queueOpts = {
			visibilityTimeoutSeconds: opts.visibilityTimeoutSeconds ?? 30,
			maxReceiveCount: REDRIVE.maxReceiveCount,
		};
		const intake = await ensureQueue(clients.sqs, "lisa-intake", queueOpts);
		const events = await ensureQueue(clients.sqs, "lisa-events", queueOpts);
		const settings: Settings = {
			...partial,
			apiToken: token(partial.apiToken, partial.dataDir, "api-token"),
			readToken: token(partial.readToken, partial.dataDir, "read-token"),
			intakeQueueUrl: intake.url,
			eventsQueueUrl: events.url,
		};

		const taskEnv = { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
		const launcher =
			settings.launcher === "container"
				? await containerLauncher(settings, taskEnv, log, uidRange)
				: new LocalLauncher(settings, taskEnv, log, {
						uids: uidRange && new AgentUidPool(uidRange),
						reach,
					});
		const deps = createDeps(settings, { launcher, log });
		if (launcher instanceof ContainerLauncher) {
			// A container that ended without its report crashed: handled now, as ECS's event is.
			launcher.onEnded = (end) =>
				taskStopped(deps, {
					...end,
					data: { exitCode: end.exitCode ?? null, oomKilled: end.oomKilled },
				}).then(() => {});
			const left = await launcher.removeLeftovers();
			if (left.length)
				log.info({ containers: left }, "removed the containers of the previous start");
		}
		const signInCodes = new SignInCodes();
		app = createApp({ ...deps, signInCodes });

		const workers = opts.workers !== false;
		const pollers = workers
			? [
					new Poller(
						clients.sqs,
						intake.url,
						intake.arn,
						intakeHandler(deps),
						log,
						settings.region,
					),
					new Poller(
						clients.sqs,
						events.url,
						events.arn,
						eventsHandler(deps),
						log,
						settings.region,
					),
				]
			: [];
		for (const p of pollers) p.start();

		// fauxqs keeps messages in memory and tasks died with the previous process: re-drive first.
		let sweeping: Promise<SweepReport> | undefined;
		const runSweep = (restarted = false) => {
			sweeping ??= sweep(deps, { restarted }).finally(() => {
				sweeping = undefined;
			});
			return sweeping;
		};
		if (workers) {
			const first = await runSweep(true).catch((err) => {
				log.error({ err }, "startup sweep failed");
			});
			if (first && (first.redriven || first.lost || first.reported))
				log.info(first, "re-drove runs left unfinished by the previous start");
		}
		const timer = workers
			? setInterval(() => {
					runSweep().catch((err) => log.error({ err }, "sweep failed"));
				}, opts.sweepIntervalMs ?? 30_000)
			: undefined;
		timer?.unref();

		let stopped = false;
		return {
			url,
			apiToken: settings.apiToken as string,
			readToken: settings.readToken as string,
			signInLink: (at = "/") => `${url}${at}#code=${signInCodes.issue()}`,
			settings,
			agentUids: uidRange,
			agentsConfined: uidRange !== undefined,
			agentReach: reach,
			...(launcher instanceof ContainerLauncher ? { image: launcher.image } : {}),
			tasks:
				launcher instanceof ContainerLauncher
					? launcher.describe()
					: "a child process per step (LISA_LAUNCHER=container: a container of the task image per step, docs/agent-task.md › The container)",
			deps,
			sweep: () => runSweep(),
			async stop() {
				if (stopped) return;
				stopped = true;
				if (timer) clearInterval(timer);
				await Promise.all(pollers.map((p) => p.stop()));
				await sweeping?.catch(() => {});
				await launcher.stopAll();
				await undo();
			},
		};
	} catch (err) {
		await undo();
		throw err;
	}
}

function closeServer(server: ReturnType<typeof serve>): Promise<void> {
	return new Promise<void>((resolve) => {
		server.close(() => resolve());
		if ("closeAllConnections" in server) server.closeAllConnections();
	});
}
