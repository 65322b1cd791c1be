import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";

// Finding processes in /proc, never by name: by uid (any of real, effective, saved, filesystem),
// or by a variable in their initial environment. A scan is a best effort: a process that forks and
// exits every few milliseconds is never alive both when /proc is listed and when it is read.
// `stopUid` does not rely on one.

/** Processes (except this one) that `match`: the live ones, and the zombies (already dead). */
async function scan(
	match: (pid: number, status: string) => Promise<boolean>,
): Promise<{ live: number[]; zombies: number[] }> {
	const found = { live: [] as number[], zombies: [] as number[] };
	for (const name of await readdir("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid === process.pid) continue;
		const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
		if (!status || !(await match(pid, status))) continue;
		if (/^State:\s+Z/m.test(status)) found.zombies.push(pid);
		else found.live.push(pid);
	}
	return found;
}

const ofUid = (uid: number) => async (_pid: number, status: string) =>
	(
		status
			.match(/^Uid:\s+(.*)$/m)?.[1]
			?.split(/\s+/)
			.map(Number) ?? []
	).includes(uid);

/** Live processes whose environment has `name=value`, except this one. */
export async function processesWithVariable(name: string, value: string): Promise<number[]> {
	const found = await scan(async (pid) => {
		const environ = await readFile(`/proc/${pid}/environ`, "utf8").catch(() => "");
		return `\0${environ}`.includes(`\0${name}=${value}\0`);
	});
	return found.live;
}

/**
 * SIGKILLs what `find` returns until it returns nothing, so a process forking meanwhile goes too.
 * The pids killed; throws when processes keep appearing.
 */
export async function killAll(find: () => Promise<number[]>, what: string): Promise<number[]> {
	const killed = new Set<number>();
	for (let tries = 0; tries < 50; tries++) {
		const pids = await find();
		if (!pids.length) return [...killed];
		for (const pid of pids)
			try {
				process.kill(pid, "SIGKILL");
				killed.add(pid);
			} catch {}
		await new Promise((r) => setTimeout(r, 20));
	}
	throw new Error(`${what} kept appearing after 50 tries at killing them`);
}

const run = promisify(execFile);
/** Only root's own programs: nothing of the agent's PATH. */
const SYSTEM = { env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } };
const as = (uid: number, gid: number) => [
	`--reuid=${uid}`,
	`--regid=${gid}`,
	"--clear-groups",
	"--",
];

/**
 * Whether the kernel counts at most `n` processes of `uid`: an exec as `uid` under RLIMIT_NPROC n
 * fails with EAGAIN while the uid has more (the kernel's own count, which no fork hides from, and
 * which holds a zombie until it is reaped).
 */
async function atMost(uid: number, gid: number, n: number): Promise<boolean> {
	try {
		await run("prlimit", [`--nproc=${n}`, "--", "setpriv", ...as(uid, gid), "true"], SYSTEM);
		return true;
	} catch (err) {
		const { code, stderr } = err as { code?: unknown; stderr?: string };
		if (code === "ENOENT")
			throw new Error(
				"prlimit and setpriv (Debian's util-linux) are needed to stop agent processes",
			);
		if (stderr?.includes("Resource temporarily unavailable")) return false;
		throw new Error(
			`could not count the processes of uid ${uid}: ${stderr?.trim() || String(err)}`,
		);
	}
}

/** Processes of a uid kept running through every try of `stopUid`. */
export class UidStillRunning extends Error {}

const same = (a: number[], b: number[]) => a.length === b.length && a.every((p, i) => p === b[i]);

/**
 * Stops every process of `uid` (docs/security.md › Security), or throws: a uid is lent again only
 * once the kernel says nothing of it runs. Each try, `kill(-1, SIGKILL)` issued as `uid` signals
 * all of its processes in one pass of the kernel's process list, which a fork cannot slip past (the
 * child is either in the list or never made); then the kernel counts the uid's processes, allowing
 * only the zombies seen both before and after the count. A zombie the agent reaped meanwhile would
 * leave room for a live process; one it keeps unreaped has a live parent, which the count holds. A
 * killer the agent killed or traced changes nothing but the throw. No pid is killed from a list,
 * which another process may have reused by then. Returns the live pids seen first, for the record.
 */
export async function stopUid(uid: number, gid: number): Promise<number[]> {
	if (uid === 0 || uid === process.getuid?.()) throw new Error(`refusing to stop uid ${uid}`);
	const seen = (await scan(ofUid(uid))).live;
	for (let tries = 0; tries < 50; tries++) {
		await run("setpriv", [...as(uid, gid), "sh", "-c", "kill -KILL -1"], SYSTEM).catch(() => {});
		const before = (await scan(ofUid(uid))).zombies;
		const counted = await atMost(uid, gid, before.length);
		if (counted && same(before, (await scan(ofUid(uid))).zombies)) return seen;
		await new Promise((r) => setTimeout(r, 20));
	}
	throw new UidStillRunning(
		`processes of uid ${uid} kept running after 50 tries at killing them all`,
	);
}
