import { readFileSync } from "node:fs";
import { chmod, lstat, mkdir } from "node:fs/promises";
import path from "node:path";
import { stopUid, UidStillRunning } from "../task/sandbox/processes";
import { SHARED_DIR } from "./agent-reach";
import { holdLock, type Lock } from "./lock";

// The local launcher's agent users (docs/security.md › Security): when the stack runs as root, each
// running step gets a uid of its own from a small pool, so its agent cannot read the task's secrets
// in /proc, and "every process of the agent's uid" is exactly that step's. A uid is taken by
// holding the kernel lock of its folder in a folder only root can open (several stacks on one
// machine share the pool, and no agent can hold a uid's lock), and given back when the step's task
// has exited and the kernel says no process of that uid runs.

/** Where the pool's locks are: root's alone. */
export const AGENT_UID_LOCKS = path.join(SHARED_DIR, "agent-uids");

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

/** `dir`, made if missing, root's and closed to everyone else (never through a link). */
async function rootsOwn(dir: string): Promise<void> {
	// Its parent (SHARED_DIR) is for every user to search: only `dir` is closed.
	await mkdir(path.dirname(dir), { recursive: true, mode: 0o755 });
	await mkdir(dir, { recursive: true, mode: 0o700 });
	const st = await lstat(dir);
	if (!st.isDirectory() || st.uid !== 0)
		throw new Error(`${dir} must be a folder of root's (it holds the agent uids' locks)`);
	await chmod(dir, 0o700);
}

export class AgentUidPool {
	private readonly taken = new Map<number, Lock>();
	/** The locks' folder, checked once per pool: only root can change it after. */
	private ready?: Promise<void>;

	/** `locks` is the folder of the pool's locks: stacks with the same one share its uids. */
	constructor(
		readonly range: UidRange,
		private readonly locks = AGENT_UID_LOCKS,
	) {}

	/** A free uid of the pool, now this process's; throws when every one is in use. */
	async take(): Promise<number> {
		const accounts = accountUids();
		this.ready ??= rootsOwn(this.locks);
		await this.ready;
		for (let uid = this.range.first; uid <= this.range.last; uid++) {
			if (accounts.has(uid) || this.taken.has(uid)) continue;
			const lock = await holdLock(path.join(this.locks, String(uid)));
			if (!lock) continue;
			this.taken.set(uid, lock);
			// A process of the uid outlived a stack that died holding it: an agent's leftover. A uid
			// whose processes cannot be stopped stays held, never lent.
			const stopped = await stopUid(uid, uid).then(
				() => true,
				(err: unknown) => {
					if (err instanceof UidStillRunning) return false;
					return this.release(uid).then(() => Promise.reject(err));
				},
			);
			if (stopped) return uid;
		}
		throw new Error(
			`every agent uid of ${this.range.first}-${this.range.last} (LISA_AGENT_UIDS) is in use by a running step; the step is retried when one is free`,
		);
	}

	/**
	 * Gives a uid back once the kernel says none of its processes runs. When they cannot be
	 * stopped, it throws and the uid stays held: out of the pool until the stack stops.
	 */
	async give(uid: number): Promise<void> {
		if (!this.taken.has(uid)) return;
		await stopUid(uid, uid);
		await this.release(uid);
	}

	/**
	 * Gives every uid back (the stack is stopping). The lock of one whose processes could not be
	 * stopped is released all the same: whoever takes it next stops them before lending it.
	 */
	async giveAll(): Promise<void> {
		for (const uid of [...this.taken.keys()]) await this.give(uid).catch(() => this.release(uid));
	}

	/** Lets go of a uid's lock, whatever its processes. */
	private async release(uid: number): Promise<void> {
		const lock = this.taken.get(uid);
		this.taken.delete(uid);
		await lock?.release();
	}
}
