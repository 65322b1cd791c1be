import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Settings } from "../../config/settings";
import {
	inheritedTaskEnv,
	type Launcher,
	type LaunchRequest,
	type TaskStatus,
	taskEnvironment,
} from "../../launcher/launcher";
import { type Logger, SECRET_ENV } from "../../log";
import type { AgentUidPool } from "../agent-users";
import { checked, logsDir } from "../launcher";
import { BoundedLog } from "../task-log";
import { type ContainerRuntime, runtimeCall } from "./runtime";

// The container launcher (LISA_LAUNCHER=container, README › The container): each step in a fresh
// container of the task image, as ECS runs it — the image's entrypoint, the task's environment,
// the secrets as the entrypoint takes them, the task size as limits, labels naming the step.

/** Variables the entrypoint moves to file descriptor 3: delivered in a secret file, never as `-e`. */
const SECRET = (name: string) =>
	SECRET_ENV.test(name) || /^AWS_CONTAINER_CREDENTIALS_(RELATIVE|FULL)_URI$/.test(name);
/** What describes the stack's machine, not the task's: the image has its own. */
const HOST_ONLY = /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TERM)$/;
const STOP_GRACE_SECONDS = 10;
/** The task's secrets in the container: /run/secrets/<this>, root's alone (entrypoint.sh reads it). */
const SECRETS_FILE = "lisa-task.json";
export const LABEL = {
	stack: "lisa.stack",
	run: "lisa.run",
	step: "lisa.step",
	attempt: "lisa.attempt",
} as const;

export interface TaskSize {
	vcpu: number;
	memoryMiB: number;
}

export interface ContainerLauncherOptions {
	runtime: ContainerRuntime;
	image: string;
	/** The agents' uids: each container's agent gets one of its own (below). */
	uids: AgentUidPool;
	size: TaskSize;
	pidsLimit: number;
	/** Names this stack's containers (a hash of its data dir), so a start finds what the last one left. */
	stack: string;
}

/** How a container ended, from the runtime's own record of it. */
export interface ContainerEnd {
	taskId: string;
	runId: string;
	stepIndex: number;
	attempt: number;
	exitCode?: number;
	oomKilled: boolean;
	reason: string;
}

/**
 * One line saying why a container stopped. The kernel's OOM killer picks the largest process of the
 * container; when that is the task (PID 1), the container exits 137 with OOMKilled set.
 */
export function describeEnd(state: ContainerState, size: TaskSize): string {
	if (state.OOMKilled)
		return `out of memory: the task reached its memory limit of ${size.memoryMiB} MiB (exit code ${state.ExitCode ?? 137})`;
	const err = state.Error ? `: ${state.Error}` : "";
	return `exit code ${state.ExitCode ?? "unknown"}${err}`;
}

interface ContainerState {
	Running?: boolean;
	ExitCode?: number;
	OOMKilled?: boolean;
	Error?: string;
}

/**
 * Whether the kernel's OOM killer killed a process of the container (by its memory cgroup). With
 * cgroups v1 podman does not always see it (OOMKilled stays false); the kernel's log says it.
 */
export async function killedForMemory(containerId: string): Promise<boolean> {
	const log = await new Promise<string>((resolve) =>
		execFile("dmesg", [], { maxBuffer: 32 * 1024 * 1024 }, (err, out) => resolve(err ? "" : out)),
	);
	return log.split("\n").some((l) => l.includes("oom_memcg=") && l.includes(containerId));
}

/** The local paths of `file://` remotes: bind-mounted at the same path, the task's git remote. */
export function localRemotes(req: LaunchRequest): string[] {
	return req.repos.flatMap((r) => {
		if (r.url.startsWith("file://")) return [fileURLToPath(r.url)];
		return path.isAbsolute(r.url) ? [r.url] : [];
	});
}

export class ContainerLauncher implements Launcher {
	/** Told of every container that ends, whoever stopped it (the stack sends it to taskStopped). */
	onEnded?: (end: ContainerEnd) => Promise<void>;
	private readonly running = new Map<string, { child: ChildProcess; ended: Promise<void> }>();
	/** The containers launched and not yet cleaned up (running holds those started). */
	private readonly claimed = new Set<string>();
	/** Set by stopAll: what ends now was stopped with the stack, and the next start re-drives it. */
	private closing = false;
	private readonly logs: string;

	constructor(
		private readonly settings: Settings,
		private readonly env: NodeJS.ProcessEnv,
		private readonly log: Logger,
		private readonly opts: ContainerLauncherOptions,
	) {
		this.logs = logsDir(settings.dataDir);
	}

	/** One line for the start's banner. */
	describe(): string {
		const { image, size, pidsLimit } = this.opts;
		return `a container of ${image} per step (${size.vcpu} vCPU, ${size.memoryMiB} MiB, ${pidsLimit} processes; LISA_LAUNCHER=container)`;
	}

	private call(args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
		return runtimeCall(this.opts.runtime, args, { env });
	}

	/** The container's name: also its task id. */
	nameOf(req: Pick<LaunchRequest, "runId" | "stepIndex" | "attempt">): string {
		const { run, name } = checked(req);
		return `lisa-${this.opts.stack}-${run}-${name}`;
	}

	/**
	 * The task's environment: the contract's variables, then what the stack passes on (agent keys,
	 * the code host). Each container's agent runs as a uid of the stack's pool, not the image's
	 * 10001: without a user namespace the kernel counts a uid's processes across every container,
	 * and the task's stop before the push counts them (README › Security), so two containers'
	 * agents must never share one. Its home is fresh for the attempt (LISA_AGENT_HOME empty).
	 */
	environment(
		req: LaunchRequest,
		uid: number,
	): { plain: Record<string, string>; secret: Record<string, string> } {
		const all: Record<string, string> = {
			...Object.fromEntries(
				Object.entries(inheritedTaskEnv(this.env)).filter(([k]) => !HOST_ONLY.test(k)),
			),
			...taskEnvironment(req, this.settings),
			LISA_AGENT_UID: String(uid),
			LISA_AGENT_GID: String(uid),
			LISA_AGENT_HOME: "",
		};
		const plain: Record<string, string> = {};
		const secret: Record<string, string> = {};
		for (const [k, v] of Object.entries(all)) (SECRET(k) ? secret : plain)[k] = v;
		return { plain, secret };
	}

	async launch(req: LaunchRequest): Promise<{ taskId: string }> {
		if (this.closing) throw new Error("the local stack is stopping");
		const name = this.nameOf(req);
		// The same attempt launched again (a redelivered message) is the container already running,
		// as ECS's client token makes RunTask return the same task.
		// Claimed before any await: a second launch meanwhile must not start (then remove) a twin.
		if (this.claimed.has(name)) return { taskId: name };
		this.claimed.add(name);
		const { run, name: file } = checked(req);
		const logFile = path.join(this.logs, run, `${file}.log`);
		mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
		const uid = await this.opts.uids.take().catch((err: unknown) => {
			this.claimed.delete(name);
			throw err;
		});
		// At most 64 characters: the stack's prefix (for removeLeftovers) and a hash of the container.
		const secretId = `lisa-${this.opts.stack}-${createHash("sha256").update(name).digest("hex").slice(0, 24)}`;
		let child: ChildProcess;
		try {
			const { plain, secret } = this.environment(req, uid);
			// One runtime secret, mounted as a file only root reads, which the entrypoint hands to the
			// task on fd 3. Not secrets of type env: podman 4.3 shows their values in `podman inspect`.
			// Its value comes from the runtime's environment (root's alone), never its argv; one an
			// earlier launch of this attempt left is replaced.
			const create = () =>
				this.call(["secret", "create", "--env", secretId, "LISA_SECRET_VALUE"], {
					...process.env,
					LISA_SECRET_VALUE: JSON.stringify(secret),
				});
			await create().catch(async () => {
				await this.call(["secret", "rm", secretId]).catch(() => {});
				await create();
			});
			const { size, pidsLimit } = this.opts;
			const args = [
				...this.opts.runtime.global,
				"run",
				"--sig-proxy=false",
				"--name",
				name,
				...[
					[LABEL.stack, this.opts.stack],
					[LABEL.run, req.runId],
					[LABEL.step, String(req.stepIndex)],
					[LABEL.attempt, String(req.attempt)],
				].flatMap(([k, v]) => ["--label", `${k}=${v}`]),
				// The host's network, as a Fargate task has its own: the store, the queue, the code host
				// and the model endpoints the stack reaches (README › The container says what that gives).
				"--network",
				"host",
				"--cpus",
				String(size.vcpu),
				"--memory",
				`${size.memoryMiB}m`,
				"--memory-swap",
				`${size.memoryMiB}m`,
				"--pids-limit",
				String(pidsLimit),
				"--security-opt",
				"no-new-privileges",
				...this.opts.runtime.limits,
				...localRemotes(req).flatMap((p) => ["--volume", `${p}:${p}`]),
				...Object.entries(plain).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
				"--secret",
				`${secretId},type=mount,target=${SECRETS_FILE},uid=0,gid=0,mode=0400`,
				"--env",
				`LISA_SECRETS_FILE=/run/secrets/${SECRETS_FILE}`,
				this.opts.image,
			];
			child = spawn(this.opts.runtime.name, args, {
				stdio: ["ignore", "pipe", "pipe"],
				detached: true,
			});
			if (child.pid === undefined) throw new Error(`could not start ${this.opts.runtime.name}`);
		} catch (err) {
			await this.cleanUp(name, secretId, uid);
			this.claimed.delete(name);
			throw err;
		}
		const out = new BoundedLog(logFile);
		let said = "";
		child.stdout?.on("data", (b: Buffer) => out.write(b));
		child.stderr?.on("data", (b: Buffer) => {
			out.write(b);
			said = (said + b.toString()).slice(-400);
		});
		const ended = new Promise<void>((resolve) =>
			child.on("close", () => {
				out.close();
				void this.ended(req, name, said)
					.catch((err) => this.log.warn({ err, taskId: name }, "could not read how a task ended"))
					.finally(() =>
						this.cleanUp(name, secretId, uid).finally(() => {
							this.running.delete(name);
							this.claimed.delete(name);
							resolve();
						}),
					);
			}),
		);
		this.running.set(name, { child, ended });
		return { taskId: name };
	}

	/** Reads the container's end from the runtime and tells onEnded. */
	private async ended(req: LaunchRequest, name: string, said: string): Promise<void> {
		const state = await this.state(name);
		const end: ContainerEnd = {
			taskId: name,
			runId: req.runId,
			stepIndex: req.stepIndex,
			attempt: req.attempt,
			exitCode: state?.ExitCode,
			oomKilled: state?.OOMKilled === true,
			reason: state
				? describeEnd(state, this.opts.size)
				: `${this.opts.runtime.name} could not run the container: ${said.trim().split("\n").at(-1) ?? "no reason given"}`,
		};
		this.log.info({ ...end }, "task exited");
		if (!this.closing) await this.onEnded?.(end);
	}

	private async cleanUp(name: string, secretId: string, uid: number): Promise<void> {
		await this.call(["rm", "--force", "--time", "0", name]).catch(() => {});
		await this.call(["secret", "rm", secretId]).catch(() => {});
		await this.opts.uids
			.give(uid)
			.catch((err) => this.log.warn({ err }, "could not give back an agent uid"));
	}

	/** The container's state; OOMKilled also from the kernel's log, where podman did not see it. */
	private async state(name: string): Promise<ContainerState | undefined> {
		try {
			const [c] = JSON.parse(await this.call(["container", "inspect", name])) as {
				Id?: string;
				State?: ContainerState;
			}[];
			const state = c?.State;
			if (!state || state.Running) return state;
			if (!state.OOMKilled && state.ExitCode === 137 && c.Id)
				state.OOMKilled = await killedForMemory(c.Id);
			return state;
		} catch {
			return undefined;
		}
	}

	async stop(taskId: string): Promise<void> {
		if (!taskId.startsWith(`lisa-${this.opts.stack}-`)) return;
		// SIGTERM, then SIGKILL after the grace, as ECS stops a task.
		void this.call(["stop", "--time", String(STOP_GRACE_SECONDS), taskId]).catch((err) =>
			this.log.warn({ err, taskId }, "could not stop a task"),
		);
	}

	async inspect(taskId: string): Promise<TaskStatus> {
		const state = await this.state(taskId);
		if (!state) return { alive: false };
		if (state.Running) return { alive: true };
		return { alive: false, stopReason: describeEnd(state, this.opts.size) };
	}

	/** Stops every task this process started (the stack is shutting down) and cleans up after them. */
	async stopAll(): Promise<void> {
		this.closing = true;
		const running = [...this.running.entries()];
		await Promise.all(
			running.map(([name]) => this.call(["stop", "--time", "2", name]).catch(() => {})),
		);
		await Promise.all(running.map(([, r]) => r.ended));
	}

	/**
	 * Removes the containers and secrets a previous start of this stack left (they cannot report to
	 * this one): the start-up sweep then re-drives their steps. Returns the containers' names.
	 */
	async removeLeftovers(): Promise<string[]> {
		const prefix = `lisa-${this.opts.stack}-`;
		const names = (
			await this.call([
				"ps",
				"--all",
				"--filter",
				`label=${LABEL.stack}=${this.opts.stack}`,
				"--format",
				"{{.Names}}",
			])
		)
			.split("\n")
			.filter((n) => n.startsWith(prefix));
		if (names.length) await this.call(["rm", "--force", "--time", "0", ...names]);
		const secrets = (await this.call(["secret", "ls", "--format", "{{.Name}}"]))
			.split("\n")
			.filter((n) => n.startsWith(prefix));
		if (secrets.length) await this.call(["secret", "rm", ...secrets]);
		return names;
	}
}
