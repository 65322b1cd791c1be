import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { killAll, processesOfUid } from "../task/sandbox/processes";

// The local launcher's agent users (README › Security): when the stack runs as root, each running
// step gets a uid of its own from a small pool, so its agent cannot read the task's secrets in
// /proc, and "every process of the agent's uid" is exactly that step's. A uid is taken by binding
// its name in the abstract socket namespace (several stacks on one machine share the pool safely)
// and given back when the step's task has exited and every process of that uid is gone.

/** The default pool: numeric uids without an account (none is needed), away from people's. */
export const DEFAULT_AGENT_UIDS = "61000-61063";

export interface UidRange {
	first: number;
	last: number;
}

/**
 * `LISA_AGENT_UIDS`: `first-last`, or `off` for agents that run as the stack's own user. Unset:
 * the default pool when the stack runs as root (only root can switch users), else off.
 */
export function agentUidRange(
	value: string | undefined,
	isRoot = process.getuid?.() === 0,
): UidRange | undefined {
	const v = value?.trim();
	if (v === "off") return undefined;
	if (!v && !isRoot) return undefined;
	const m = /^(\d+)-(\d+)$/.exec(v || DEFAULT_AGENT_UIDS);
	const first = Number(m?.[1]);
	const last = Number(m?.[2]);
	if (!m || first < 1 || last < first || last > 2 ** 31 - 2)
		throw new Error(
			`LISA_AGENT_UIDS must be "first-last" (non-root uids, e.g. ${DEFAULT_AGENT_UIDS}) or "off", not "${value}"`,
		);
	if (!isRoot)
		throw new Error(
			`LISA_AGENT_UIDS is set, but only a stack running as root can start agents as other users; unset it (or set it to "off") to run agents as your own user`,
		);
	return { first, last };
}

/** Uids that belong to an account on this machine: never lent to an agent. */
function accountUids(): Set<number> {
	try {
		return new Set(
			readFileSync("/etc/passwd", "utf8")
				.split("\n")
				.map((l) => Number(l.split(":")[2]))
				.filter(Number.isInteger),
		);
	} catch {
		return new Set();
	}
}

/** Kills every process of `uid` (what a step's agent left behind). */
const killUid = (uid: number) => killAll(() => processesOfUid(uid), `processes of uid ${uid}`);

/**
 * Binds `name` in Linux's abstract socket namespace: one holder on the machine, and the kernel
 * releases it when the holder closes it or dies, so no stale lock outlives a crashed stack (a
 * lock file does, and breaking a stale one races: two stacks could each take the same uid).
 */
function bind(name: string): Promise<Server | undefined> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once("error", (err: NodeJS.ErrnoException) =>
			err.code === "EADDRINUSE" ? resolve(undefined) : reject(err),
		);
		server.listen({ path: `\0${name}` }, () => resolve(server.unref()));
	});
}

export class AgentUidPool {
	private readonly taken = new Map<number, Server>();

	/** `namespace` names the pool's locks: stacks with the same one share its uids. */
	constructor(
		readonly range: UidRange,
		private readonly namespace = "lisa-agent-uid",
	) {}

	/** A free uid of the pool, now this process's; throws when every one is in use. */
	async take(): Promise<number> {
		const accounts = accountUids();
		for (let uid = this.range.first; uid <= this.range.last; uid++) {
			if (accounts.has(uid) || this.taken.has(uid)) continue;
			const lock = await bind(`${this.namespace}-${uid}`);
			if (!lock) continue;
			// A process of the uid outlived a stack that died holding it: it is an agent's leftover.
			await killUid(uid);
			this.taken.set(uid, lock);
			return uid;
		}
		throw new Error(
			`every agent uid of ${this.range.first}-${this.range.last} (LISA_AGENT_UIDS) is in use by a running step; the step is retried when one is free`,
		);
	}

	/** Gives a uid back once its processes are gone. */
	async give(uid: number): Promise<void> {
		const lock = this.taken.get(uid);
		if (!lock) return;
		this.taken.delete(uid);
		await killUid(uid);
		await new Promise((resolve) => lock.close(resolve));
	}

	/** Gives every uid back (the stack is stopping). */
	async giveAll(): Promise<void> {
		for (const uid of [...this.taken.keys()]) await this.give(uid);
	}
}
