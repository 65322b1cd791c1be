import { readdir, readFile } from "node:fs/promises";

// Finding processes in /proc, never by name: by uid (any of real, effective, saved, filesystem),
// or by a variable in their initial environment. Zombies (already dead) are not counted.

async function scan(match: (pid: number, status: string) => Promise<boolean>): Promise<number[]> {
	const pids: number[] = [];
	for (const name of await readdir("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid === process.pid) continue;
		const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
		if (status && !/^State:\s+Z/m.test(status) && (await match(pid, status))) pids.push(pid);
	}
	return pids;
}

/** Live processes of `uid`, except this one. */
export function processesOfUid(uid: number): Promise<number[]> {
	return scan(async (_pid, status) => {
		const uids =
			status
				.match(/^Uid:\s+(.*)$/m)?.[1]
				?.split(/\s+/)
				.map(Number) ?? [];
		return uids.includes(uid);
	});
}

/** Live processes whose environment has `name=value`, except this one. */
export function processesWithVariable(name: string, value: string): Promise<number[]> {
	return scan(async (pid) => {
		const environ = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
		return `\0${environ}`.includes(`\0${name}=${value}\0`);
	});
}

/**
 * SIGKILLs what `find` returns until it returns nothing, so a process forking meanwhile goes too.
 * The pids killed; throws when processes keep appearing.
 */
export async function killAll(find: () => Promise<number[]>, what: string): Promise<number[]> {
	const killed = new Set<number>();
	for (let round = 0; round < 50; round++) {
		const pids = await find();
		if (!pids.length) return [...killed];
		for (const pid of pids)
			try {
				process.kill(pid, "SIGKILL");
				killed.add(pid);
			} catch {}
		await new Promise((r) => setTimeout(r, 20));
	}
	throw new Error(`${what} kept appearing after 50 rounds of killing them`);
}
