import { ClassicLevel } from "classic-level";

// A lock the kernel keeps: LevelDB's LOCK file (an fcntl lock) on a folder of its own. One holder
// on the machine, and the kernel frees it when the holder closes it or dies, so no stale lock
// outlives a crashed stack and none has to be broken (which races).

export interface Lock {
	release(): Promise<void>;
}

/** Holds the lock of `dir` (made if missing), or undefined when another process holds it. */
export async function holdLock(dir: string): Promise<Lock | undefined> {
	const db = new ClassicLevel(dir);
	try {
		await db.open();
	} catch (err) {
		const cause = (err as { cause?: { code?: string } }).cause;
		if (cause?.code === "LEVEL_LOCKED") return undefined;
		throw err;
	}
	return { release: () => db.close() };
}
