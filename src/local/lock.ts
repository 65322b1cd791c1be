import path from "node:path";
import { ClassicLevel } from "classic-level";

// A lock the kernel keeps: LevelDB's LOCK file (an fcntl lock) on a folder of its own. One holder
// on the machine, and the kernel frees it when the holder closes it or dies, so no stale lock
// outlives a crashed stack and none has to be broken (which races).
//
// An fcntl lock belongs to the process, and closing any descriptor of its file drops it: LevelDB
// opens the LOCK file before it finds the lock already held in this process, and its close would
// free the lock for every other process. So this process answers a second try itself, from a list
// kept on globalThis (a test runner can load this module more than once in one process).

const registry = globalThis as { [key: symbol]: Set<string> | undefined };
const HELD_KEY = Symbol.for("lisa.heldLocks");
registry[HELD_KEY] ??= new Set();
const held = registry[HELD_KEY];

export interface Lock {
	release(): Promise<void>;
}

/** Holds the lock of `dir` (made if missing), or undefined when a process (this one too) holds it. */
export async function holdLock(dir: string): Promise<Lock | undefined> {
	const key = path.resolve(dir);
	if (held.has(key)) return undefined;
	held.add(key);
	const db = new ClassicLevel(key);
	try {
		await db.open();
	} catch (err) {
		held.delete(key);
		const cause = (err as { cause?: { code?: string } }).cause;
		if (cause?.code === "LEVEL_LOCKED") return undefined;
		throw err;
	}
	let released = false;
	return {
		async release() {
			if (released) return;
			released = true;
			await db.close();
			held.delete(key);
		},
	};
}
