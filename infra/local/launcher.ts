import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
	inheritedTaskEnv,
	type Launcher,
	type LaunchRequest,
	type TaskStatus,
	taskEnvironment,
} from "../../shared/launcher/launcher";
import type { Logger } from "../../shared/log";
import type { Settings } from "../../shared/settings";

const TASK_ENTRY = fileURLToPath(new URL("../../tasks/agent/main.ts", import.meta.url));
/** tsx runs the TypeScript task entry directly, as `npm start` runs the stack. */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const STOP_GRACE_MS = 10_000;

/**
 * Runs the agent task as a child process with the ECS task's environment, in a per-step workspace
 * under the data dir. Each task leads its own process group so stopping it stops the agent CLI too.
 * Task ids are `local:<pid>:<nonce>`: the nonce, also in the child's environment, tells a task of a
 * previous stack process from an unrelated process that reused the pid.
 */
export class LocalLauncher implements Launcher {
	private readonly children = new Map<string, ChildProcess>();

	constructor(
		private readonly settings: Settings,
		private readonly env: NodeJS.ProcessEnv,
		private readonly log: Logger,
	) {}

	workspaceOf(req: Pick<LaunchRequest, "runId" | "stepIndex">): string {
		return path.join(this.settings.dataDir, "workspaces", req.runId, `step-${req.stepIndex}`);
	}

	async launch(req: LaunchRequest): Promise<{ taskId: string }> {
		const workspace = this.workspaceOf(req);
		mkdirSync(workspace, { recursive: true });
		const logFile = openSync(path.join(workspace, `attempt-${req.attempt}.log`), "a");
		const nonce = randomUUID();
		const child = spawn(process.execPath, ["--import", TSX_LOADER, TASK_ENTRY], {
			cwd: workspace,
			env: {
				...inheritedTaskEnv(this.env),
				...taskEnvironment(req, this.settings),
				LISA_WORKSPACE: workspace,
				LISA_LOCAL_TASK: nonce,
			},
			stdio: ["ignore", logFile, logFile],
			detached: true,
		});
		closeSync(logFile); // the child holds its own copy
		const pid = child.pid;
		if (pid === undefined) throw new Error("could not start the task process");
		const taskId = `local:${pid}:${nonce}`;
		this.children.set(taskId, child);
		child.on("exit", (code, signal) => {
			this.children.delete(taskId);
			this.log.info({ taskId, code, signal, runId: req.runId, step: req.stepIndex }, "task exited");
		});
		return { taskId };
	}

	async stop(taskId: string): Promise<void> {
		const pid = this.ownedOrOrphan(taskId);
		if (pid === undefined) return;
		killGroup(pid, "SIGTERM");
		setTimeout(() => killGroup(pid, "SIGKILL"), STOP_GRACE_MS).unref();
	}

	async inspect(taskId: string): Promise<TaskStatus> {
		const child = this.children.get(taskId);
		if (child) return { alive: child.exitCode === null && child.signalCode === null };
		// A task of a previous stack process cannot report to this one's queues: reap it.
		const orphan = this.ownedOrOrphan(taskId);
		if (orphan !== undefined) killGroup(orphan, "SIGKILL");
		return { alive: false };
	}

	/** Stops every task this process started (the stack is shutting down). */
	async stopAll(): Promise<void> {
		const pids = [...this.children.values()].flatMap((c) => (c.pid ? [c.pid] : []));
		for (const pid of pids) killGroup(pid, "SIGTERM");
		await new Promise((r) => setTimeout(r, pids.length ? 200 : 0));
		for (const pid of pids) killGroup(pid, "SIGKILL");
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
