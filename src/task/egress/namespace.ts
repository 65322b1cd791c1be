import { type ChildProcess, spawn } from "node:child_process";
import type { Server } from "node:net";
import { fileURLToPath } from "node:url";
import { StepFailure } from "../report/failure";

// The agent's network namespace (docs/security.md › Security): only loopback, no route out. The
// task (root) makes it with `unshare --net` and starts every process of the agent's uid inside it
// with `nsenter`; the only sockets there the task listens on are the broker's and the egress
// proxy's, handed over by the namespace's holder (holder.mjs), so the agent reaches those two and
// its own loopback, and nothing else: no host service, no other run, no resolver.

const HOLDER = fileURLToPath(new URL("./holder.mjs", import.meta.url));
const READY_MS = 15_000;

export interface AgentNamespace {
	/** A listener inside the namespace for each port asked for, in order. */
	readonly listeners: readonly Server[];
	/** `nsenter`'s argv to run a program in the namespace as uid:gid. */
	enter(uid: number, gid: number): string[];
	close(): Promise<void>;
}

/** Makes the namespace and listens there on `ports` (each also free inside it, being fresh). */
export async function openAgentNamespace(ports: readonly number[]): Promise<AgentNamespace> {
	const holder = spawn("unshare", ["--net", "--", process.execPath, HOLDER, ...ports.map(String)], {
		stdio: ["ignore", "ignore", "pipe", "ipc"],
	});
	let said = "";
	holder.stderr?.on("data", (b: Buffer) => {
		said = (said + b.toString()).slice(-500);
	});
	const listeners = new Map<number, Server>();
	try {
		await new Promise<void>((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error("it did not start in time")), READY_MS);
			holder.on("message", (m: { port?: number }, handle?: Server) => {
				if (typeof m?.port !== "number" || !handle) return;
				listeners.set(m.port, handle);
				if (listeners.size === ports.length) {
					clearTimeout(timer);
					resolve();
				}
			});
			holder.on("error", reject);
			holder.on("exit", (code) => reject(new Error(`it exited (${code}): ${said.trim()}`)));
		});
	} catch (err) {
		holder.kill("SIGKILL");
		for (const l of listeners.values()) l.close();
		throw new StepFailure(
			`could not give the agent a network of its own (unshare --net, ip): ${(err as Error).message}`,
			false,
			"config",
		);
	}
	return {
		listeners: ports.map((p) => listeners.get(p) as Server),
		enter: (uid, gid) => ["nsenter", `--net=${namespaceOf(holder)}`, `-S${uid}`, `-G${gid}`, "--"],
		async close() {
			for (const l of listeners.values()) l.close();
			if (holder.exitCode !== null || holder.signalCode !== null) return;
			const gone = new Promise((resolve) => holder.once("exit", resolve));
			holder.kill("SIGKILL");
			await gone;
		},
	};
}

/**
 * The holder's namespace, while it lives: once it has exited its pid may name another process, and
 * a program entering that would have the host's network.
 */
function namespaceOf(holder: ChildProcess): string {
	if (holder.exitCode !== null || holder.signalCode !== null)
		throw new StepFailure("the agent's network namespace ended before its attempt", true, "agent");
	return `/proc/${holder.pid}/ns/net`;
}
