import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { readdir, rm, rmdir, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Settings } from "../config/settings";
import { isRunId } from "../domain/ids";
import {
	inheritedTaskEnv,
	type Launcher,
	type LaunchRequest,
	type TaskStatus,
	taskEnvironment,
} from "../launcher/launcher";
import type { Logger } from "../log";
import type { AgentReach } from "./agent-reach";
import type { AgentUidPool } from "./agent-users";
import { BoundedLog } from "./task-log";

const TASK_ENTRY = fileURLToPath(new URL("../task/main.ts", import.meta.url));
/** tsx runs the TypeScript task entry directly, as `npm start` runs the stack. */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const STOP_GRACE_MS = 10_000;
/** Task logs older than this are removed when the stack starts. */
const LOG_RETENTION_DAYS = 14;

export interface LocalLauncherOptions {
	/** Agent uids, one per running step (the stack runs as root); none: agents run as the stack. */
	uids?: AgentUidPool;
	/** Where the workspaces are and the tasks' PATH (agent-reach.ts). */
	reach: AgentReach;
}

export const logsDir = (dataDir: string) => path.join(dataDir, "logs");

/**
 * Makes the folders for tasks, removing what tasks of a previous start left (they cannot report to
 * this one) and logs past their retention. With agents of other uids, they can reach their
 * workspaces (the start placed them where they can: agent-reach.ts) and nothing else of the data
 * dir.
 */
export async function prepareDataDir(
	dataDir: string,
	workspaces: string,
	otherUids: boolean,
): Promise<void> {
	const logs = logsDir(dataDir);
	await rm(workspaces, { recursive: true, force: true });
	mkdirSync(workspaces, { recursive: true });
	mkdirSync(logs, { recursive: true, mode: 0o700 });
	const before = Date.now() - LOG_RETENTION_DAYS * 24 * 3600 * 1000;
	for (const run of await readdir(logs)) {
		const dir = path.join(logs, run);
		if ((await stat(dir)).mtimeMs < before) await rm(dir, { recursive: true, force: true });
	}
	if (!otherUids) return;
	// Lisa's own folders only: the data dir may be anywhere, and what else is there is not Lisa's.
	chmodSync(workspaces, 0o711);
	chmodSync(logs, 0o700);
	const store = path.join(dataDir, "dynamodb");
	if (existsSync(store)) chmodSync(store, 0o700);
}

/** A launch request's ids, checked before they become paths: nothing else reaches the disk. */
export function checked(req: Pick<LaunchRequest, "runId" | "stepIndex" | "attempt">) {
	if (!isRunId(req.runId)) throw new Error(`invalid run id: ${JSON.stringify(req.runId)}`);
	for (const [name, n, min] of [
		["step index", req.stepIndex, 0],
		["attempt", req.attempt, 1],
	] as const)
		if (!Number.isSafeInteger(n) || n < min) throw new Error(`invalid ${name}: ${n}`);
	return { run: req.runId, name: `step-${req.stepIndex}-attempt-${req.attempt}` };
}

/** A task's log file under the data dir's logs: `<run>/step-<n>-attempt-<m>.log`, for every local launcher. */
export function taskLogOf(
	logs: string,
	req: Pick<LaunchRequest, "runId" | "stepIndex" | "attempt">,
): string {
	const { run, name } = checked(req);
	return path.join(logs, run, `${name}.log`);
}

/**
 * Runs the agent task as a child process with the ECS task's environment, in a workspace of its
 * own under the data dir (removed when the task exits), its output in a bounded log file. As root,
 * each task's agent gets a uid of its own from the pool. Each task leads its own process group so
 * stopping it stops the agent CLI too. Task ids are `local:<pid>:<nonce>`: the nonce, also in the
 * child's environment, tells a task of a previous stack process from an unrelated process that
 * reused the pid.
 */
export class LocalLauncher implements Launcher {
	private readonly children = new Map<string, { child: ChildProcess; exited: Promise<void> }>();
	readonly workspaces: string;
	readonly logs: string;

	constructor(
		private readonly settings: Settings,
		private readonly env: NodeJS.ProcessEnv,
		private readonly log: Logger,
		private readonly opts: LocalLauncherOptions,
	) {
		this.workspaces = opts.reach.workspaces;
		this.logs = logsDir(settings.dataDir);
	}

	workspaceOf(req: Pick<LaunchRequest, "runId" | "stepIndex" | "attempt">): string {
		const { run, name } = checked(req);
		return path.join(this.workspaces, run, name);
	}

	logOf(req: Pick<LaunchRequest, "runId" | "stepIndex" | "attempt">): string {
		return taskLogOf(this.logs, req);
	}

	async launch(req: LaunchRequest): Promise<{ taskId: string }> {
		const workspace = this.workspaceOf(req);
		const logFile = this.logOf(req);
		mkdirSync(workspace, { recursive: true, mode: 0o711 });
		mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
		const uid = await this.opts.uids?.take();
		const nonce = randomUUID();
		let child: ChildProcess;
		try {
			child = spawn(process.execPath, ["--import", TSX_LOADER, TASK_ENTRY], {
				cwd: workspace,
				env: {
					...inheritedTaskEnv(this.env),
					PATH: this.opts.reach.path,
					...taskEnvironment(req, this.settings),
					LISA_WORKSPACE: workspace,
					LISA_LOCAL_TASK: nonce,
					...(uid === undefined
						? {}
						: {
								LISA_AGENT_UID: String(uid),
								LISA_AGENT_GID: String(uid),
								LISA_AGENT_NETWORK: "allow-list",
							}),
				},
				stdio: ["ignore", "pipe", "pipe"],
				detached: true,
			});
			if (child.pid === undefined) throw new Error("could not start the task process");
		} catch (err) {
			if (uid !== undefined) await this.opts.uids?.give(uid);
			throw err;
		}
		const out = new BoundedLog(logFile);
		child.stdout?.on("data", (b: Buffer) => out.write(b));
		child.stderr?.on("data", (b: Buffer) => out.write(b));
		const taskId = `local:${child.pid}:${nonce}`;
		const exited = new Promise<void>((resolve) =>
			child.on("close", (code, signal) => {
				out.close();
				this.log.info(
					{ taskId, code, signal, runId: req.runId, step: req.stepIndex },
					"task exited",
				);
				// The task removes its workspace itself; this also covers one that was killed.
				void Promise.all([
					rm(workspace, { recursive: true, force: true }).then(() =>
						rmdir(path.dirname(workspace)).catch(() => {}),
					),
					uid === undefined ? undefined : this.opts.uids?.give(uid),
				])
					.catch((err) => this.log.warn({ err, taskId }, "could not clean up after a task"))
					.finally(() => {
						this.children.delete(taskId);
						resolve();
					});
			}),
		);
		this.children.set(taskId, { child, exited });
		return { taskId };
	}

	async stop(taskId: string): Promise<void> {
		const pid = this.ownedOrOrphan(taskId);
		if (pid === undefined) return;
		killGroup(pid, "SIGTERM");
		setTimeout(() => killGroup(pid, "SIGKILL"), STOP_GRACE_MS).unref();
	}

	async inspect(taskId: string): Promise<TaskStatus> {
		const child = this.children.get(taskId)?.child;
		if (child) return { alive: child.exitCode === null && child.signalCode === null };
		// A task of a previous stack process cannot report to this one's queues: reap it.
		const orphan = this.ownedOrOrphan(taskId);
		if (orphan !== undefined) killGroup(orphan, "SIGKILL");
		return { alive: false };
	}

	/** Stops every task this process started (the stack is shutting down) and cleans up after them. */
	async stopAll(): Promise<void> {
		const running = [...this.children.values()];
		const pids = running.flatMap(({ child }) => (child.pid ? [child.pid] : []));
		for (const pid of pids) killGroup(pid, "SIGTERM");
		await new Promise((r) => setTimeout(r, pids.length ? 200 : 0));
		for (const pid of pids) killGroup(pid, "SIGKILL");
		await Promise.all(running.map((r) => r.exited));
		await this.opts.uids?.giveAll();
	}

	private ownedOrOrphan(taskId: string): number | undefined {
		const [, pidText, nonce] = taskId.split(":");
		const pid = Number(pidText);
		if (!Number.isInteger(pid) || !nonce) return undefined;
		if (this.children.has(taskId)) return pid;
		try {
			const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
			return environ.split("\0").includes(`LISA_LOCAL_TASK=${nonce}`) ? pid : undefined;
		} catch {
			return undefined;
		}
	}
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {}
}
