import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
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
import type { Logger } from "../../log";
import type { AgentUidPool } from "../agent-users";
import { checked, logsDir, taskLogOf } from "../launcher";
import { BoundedLog } from "../task-log";
import { type ContainerRuntime, runtimeCall } from "./runtime";

// The container launcher (LISA_LAUNCHER=container, docs/agent-task.md › The container): each step
// in a fresh container of the task image, as ECS runs it — the image's entrypoint, the task's
// environment, the secrets as the entrypoint takes them, the task size as limits, labels naming the
// step.

/**
 * The variables a container's configuration may show (`podman inspect`): the contract's ids and
 * endpoints. Every other one (keys, tokens, a provider's headers or inline config, the repositories'
 * URLs) goes in the task's secret file, which the entrypoint hands to the task with the secrets.
 */
const SHOWN =
	/^(LISA_(RUN_ID|STEP_INDEX|ATTEMPT|TABLE_NAME|EVENTS_QUEUE_URL|DYNAMODB_ENDPOINT|SQS_ENDPOINT|AGENT_UID|AGENT_GID|AGENT_HOME|AGENT_NETWORK)|AWS_REGION)$/;
/** What describes the stack's machine, not the task's: the image has its own. */
const HOST_ONLY = /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TERM)$/;
const STOP_GRACE_SECONDS = 10;
/** The task's secrets in the container: /run/secrets/<this>, root's alone (entrypoint.sh reads it). */
const SECRETS_FILE = "lisa-task.json";
const LABEL = {
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
	/** The agent CLIs the image carries (its LISA_AGENT_CLIS). */
	clis: readonly string[];
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
 * container; when that is the task (PID 1), the container exits 137 out of memory.
 */
export function describeEnd(state: ContainerState, size: TaskSize): string {
	if (state.OOMKilled)
		return `out of memory: the task reached its memory limit of ${size.memoryMiB} MiB (exit code ${state.ExitCode ?? 137})`;
	const err = state.Error ? `: ${state.Error}` : "";
	return `exit code ${state.ExitCode ?? "unknown"}${err}`;
}

interface ContainerState {
	Status?: string;
	Running?: boolean;
	ExitCode?: number;
	OOMKilled?: boolean;
	Error?: string;
}

/** A container that is or will be running: it may still report. */
const LIVE = new Set(["created", "configured", "initialized", "running", "paused", "stopping"]);

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
	/** The containers started, each with its attached `podman start` and its end. */
	private readonly running = new Map<string, { child: ChildProcess; ended: Promise<void> }>();
	/** Launched and not yet cleaned up: a second launch of the same attempt is the first. */
	private readonly claimed = new Set<string>();
	/** Launches under way, which stopAll waits for. */
	private readonly pending = new Set<Promise<void>>();
	/** Set by stopAll: what ends now was stopped with the stack, and the next start re-drives it. */
	private closing = false;
	private readonly logs: string;
	/** A folder per container: the runtime's working directory, where conmon notes an OOM kill. */
	private readonly work: string;

	constructor(
		private readonly settings: Settings,
		private readonly env: NodeJS.ProcessEnv,
		private readonly log: Logger,
		private readonly opts: ContainerLauncherOptions,
	) {
		this.logs = logsDir(settings.dataDir);
		this.work = path.join(settings.dataDir, "containers");
	}

	/** The image and its agent CLIs, for the start's checks. */
	get image(): { name: string; clis: readonly string[] } {
		return { name: this.opts.image, clis: this.opts.clis };
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
	 * the code host), split into what the container shows and what goes in its secret file. Each
	 * container's agent runs as a uid of the stack's pool, not the image's 10001: without a user
	 * namespace the kernel counts a uid's processes across every container, and the task's stop
	 * before the push counts them (docs/security.md › Security), so two containers' agents must never
	 * share one. Its home is fresh for the attempt (LISA_AGENT_HOME empty).
	 */
	environment(
		req: LaunchRequest,
		uid: number,
	): { shown: Record<string, string>; secret: Record<string, string> } {
		const all: Record<string, string> = {
			...Object.fromEntries(
				Object.entries(inheritedTaskEnv(this.env)).filter(([k]) => !HOST_ONLY.test(k)),
			),
			...taskEnvironment(req, this.settings),
			LISA_AGENT_UID: String(uid),
			LISA_AGENT_GID: String(uid),
			LISA_AGENT_HOME: "",
			LISA_AGENT_NETWORK: "allow-list",
		};
		const shown: Record<string, string> = {};
		const secret: Record<string, string> = {};
		for (const [k, v] of Object.entries(all)) (SHOWN.test(k) ? shown : secret)[k] = v;
		return { shown, secret };
	}

	/**
	 * The container exists when this returns (stop and inspect find it). The same attempt launched
	 * again (a redelivered message) is the same container, as ECS's client token makes RunTask
	 * return the same task; a launch while the stack stops starts nothing, and the next start's
	 * sweep re-drives the step.
	 */
	async launch(req: LaunchRequest): Promise<{ taskId: string }> {
		const name = this.nameOf(req);
		// Claimed before any await: a second launch meanwhile must not start (then remove) a twin.
		if (this.claimed.has(name) || this.closing) return { taskId: name };
		this.claimed.add(name);
		const started = this.start(req, name);
		this.pending.add(started);
		try {
			await started;
		} catch (err) {
			this.claimed.delete(name);
			throw err;
		} finally {
			this.pending.delete(started);
		}
		return { taskId: name };
	}

	private async start(req: LaunchRequest, name: string): Promise<void> {
		const logFile = taskLogOf(this.logs, req);
		const dir = path.join(this.work, name);
		mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		const uid = await this.opts.uids.take();
		// At most 64 characters: the stack's prefix (for removeLeftovers) and a hash of the container.
		const secretId = `lisa-${this.opts.stack}-${createHash("sha256").update(name).digest("hex").slice(0, 24)}`;
		const cleanUp = () => this.cleanUp(name, secretId, uid, dir);
		let child: ChildProcess;
		try {
			const { shown, secret } = this.environment(req, uid);
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
			await this.call(["rm", "--force", "--time", "0", name]).catch(() => {});
			await this.call(this.createArgs(req, name, secretId, shown));
			if (this.closing) throw new Error("the local stack is stopping");
			child = spawn(
				this.opts.runtime.name,
				[...this.opts.runtime.global, "start", "--attach", "--sig-proxy=false", name],
				{ cwd: dir, stdio: ["ignore", "pipe", "pipe"], detached: true },
			);
			if (child.pid === undefined) throw new Error(`could not start ${this.opts.runtime.name}`);
		} catch (err) {
			await cleanUp();
			throw err;
		}
		const out = new BoundedLog(logFile);
		let said = "";
		child.stdout?.on("data", (b: Buffer) => out.write(b));
		child.stderr?.on("data", (b: Buffer) => {
			out.write(b);
			said = (said + b.toString()).slice(-400);
		});
		const ended = new Promise<void>((resolve) => {
			let once = false;
			const end = () => {
				if (once) return;
				once = true;
				out.close();
				void this.ended(req, name, dir, said, cleanUp)
					.catch((err) => this.log.warn({ err, taskId: name }, "could not handle a task's end"))
					.finally(() => {
						this.running.delete(name);
						this.claimed.delete(name);
						resolve();
					});
			};
			child.on("close", end);
			child.on("error", (err) => {
				said = err.message;
				end();
			});
		});
		this.running.set(name, { child, ended });
	}

	private createArgs(
		req: LaunchRequest,
		name: string,
		secretId: string,
		shown: Record<string, string>,
	): string[] {
		const { size, pidsLimit } = this.opts;
		return [
			"create",
			"--name",
			name,
			...[
				[LABEL.stack, this.opts.stack],
				[LABEL.run, req.runId],
				[LABEL.step, String(req.stepIndex)],
				[LABEL.attempt, String(req.attempt)],
			].flatMap(([k, v]) => ["--label", `${k}=${v}`]),
			// The host's network, as a Fargate task has its subnet's: the store, the queue, the code host
			// and the model endpoints the stack reaches (docs/agent-task.md › The container launcher says
			// what that gives).
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
			// The task (root) makes its agent's network namespace and brings its loopback up
			// (src/task/egress/namespace.ts); the agent, another uid under no-new-privileges, holds no
			// capability at all.
			"--cap-add",
			"SYS_ADMIN",
			"--cap-add",
			"NET_ADMIN",
			// Its output is the task's log (start --attach); the runtime's copy goes with the container.
			"--log-driver",
			"k8s-file",
			...this.opts.runtime.limits,
			...localRemotes(req).flatMap((p) => ["--volume", `${p}:${p}`]),
			...Object.entries(shown).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
			"--secret",
			`${secretId},type=mount,target=${SECRETS_FILE},uid=0,gid=0,mode=0400`,
			"--env",
			`LISA_SECRETS_FILE=/run/secrets/${SECRETS_FILE}`,
			this.opts.image,
		];
	}

	/** Reads how the container ended, removes it and what was made for it, then tells onEnded. */
	private async ended(
		req: LaunchRequest,
		name: string,
		dir: string,
		said: string,
		cleanUp: () => Promise<void>,
	): Promise<void> {
		const state = await this.state(name, dir).catch(() => undefined);
		await cleanUp();
		const end: ContainerEnd = {
			taskId: name,
			runId: req.runId,
			stepIndex: req.stepIndex,
			attempt: req.attempt,
			exitCode: state?.ExitCode,
			oomKilled: state?.OOMKilled === true,
			reason: state
				? describeEnd(state, this.opts.size)
				: `${this.opts.runtime.name} could not run the container: ${said.trim().split("\n").at(-1) || "no reason given"}`,
		};
		this.log.info({ ...end }, "task exited");
		if (!this.closing) await this.onEnded?.(end);
	}

	private async cleanUp(name: string, secretId: string, uid: number, dir: string): Promise<void> {
		await this.call(["rm", "--force", "--time", "0", name]).catch(() => {});
		await this.call(["secret", "rm", secretId]).catch(() => {});
		await rm(dir, { recursive: true, force: true });
		await this.opts.uids
			.give(uid)
			.catch((err) => this.log.warn({ err }, "could not give back an agent uid"));
	}

	/**
	 * The container's state, undefined when there is no such container. conmon writes `oom` in its
	 * working directory (the container's folder) when the kernel killed for memory, which podman
	 * 4.3 with cgroups v1 does not always carry into OOMKilled.
	 */
	private async state(
		name: string,
		dir = path.join(this.work, name),
	): Promise<ContainerState | undefined> {
		let out: string;
		try {
			out = await this.call(["container", "inspect", name]);
		} catch (err) {
			if (/no such container/i.test((err as Error).message)) return undefined;
			throw err;
		}
		const state = (JSON.parse(out) as { State?: ContainerState }[])[0]?.State;
		if (state && !state.OOMKilled && existsSync(path.join(dir, "oom"))) state.OOMKilled = true;
		return state;
	}

	async stop(taskId: string): Promise<void> {
		if (!taskId.startsWith(`lisa-${this.opts.stack}-`)) return;
		// SIGTERM, then SIGKILL after the grace, as ECS stops a task.
		void this.call(["stop", "--time", String(STOP_GRACE_SECONDS), taskId]).catch((err) =>
			this.log.warn({ err, taskId }, "could not stop a task"),
		);
	}

	async inspect(taskId: string): Promise<TaskStatus> {
		// Launched by this process and not yet ended: alive (its end is handled when it comes).
		if (this.claimed.has(taskId)) return { alive: true };
		const state = await this.state(taskId).catch((err: Error) => {
			this.log.warn({ err, taskId }, "could not inspect a task");
			return null;
		});
		if (state === null) return {};
		if (!state) return { alive: false };
		if (state.Running || LIVE.has(state.Status ?? "")) return { alive: true };
		return { alive: false, stopReason: describeEnd(state, this.opts.size) };
	}

	/** Stops every task this process started (the stack is shutting down) and cleans up after them. */
	async stopAll(): Promise<void> {
		this.closing = true;
		await Promise.allSettled([...this.pending]);
		const running = [...this.running.entries()];
		await Promise.all(
			running.map(([name]) => this.call(["stop", "--time", "2", name]).catch(() => {})),
		);
		await Promise.all(running.map(([, r]) => r.ended));
	}

	/**
	 * Removes the containers, secrets and folders a previous start of this stack left (they cannot
	 * report to this one): the start-up sweep then re-drives their steps. Returns the containers.
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
		await rm(this.work, { recursive: true, force: true });
		mkdirSync(this.work, { recursive: true, mode: 0o700 });
		return names;
	}
}
