import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { processesOfUid, stopUid } from "./processes";

// The reviewer's fork-hopper (issue: a process left by one run writes into the next run): it forks
// a child and exits every ~5 ms, so a /proc scan never holds it. `stopUid` must leave nothing of it.

const UID = 63500;
const HOPPER =
	"my $end=time+60; while(time<$end){ exit 0 if fork; select(undef,undef,undef,0.005) }";

/** What `ps` says the uid runs, zombies (already dead) left out, over `ms`. */
async function liveOver(ms: number): Promise<string[]> {
	const seen: string[] = [];
	for (const end = Date.now() + ms; Date.now() < end; ) {
		const { stdout } = await promisify(execFile)("ps", [
			"-o",
			"pid=,stat=",
			"-u",
			String(UID),
		]).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
		seen.push(...stdout.split("\n").filter((l) => l.trim() && !/\sZ/.test(l)));
		await new Promise((r) => setTimeout(r, 50));
	}
	return seen;
}

describe.skipIf(process.getuid?.() !== 0)("stopping every process of a uid", () => {
	it("stops a process that forks away every 5 ms, which a /proc scan cannot", async () => {
		spawn("setsid", ["perl", "-e", HOPPER], {
			uid: UID,
			gid: UID,
			cwd: "/",
			detached: true,
			stdio: "ignore",
		}).unref();
		await new Promise((r) => setTimeout(r, 300));
		expect((await liveOver(300)).length).toBeGreaterThan(0);
		await stopUid(UID, UID);
		expect(await liveOver(1500)).toEqual([]);
		expect(await processesOfUid(UID)).toEqual([]);
	});

	it("returns at once for a uid with nothing running, and refuses root's", async () => {
		expect(await stopUid(UID + 1, UID + 1)).toEqual([]);
		await expect(stopUid(0, 0)).rejects.toThrow(/refusing/);
	});
});
