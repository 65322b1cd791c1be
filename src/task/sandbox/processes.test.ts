import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { stopUid, UidStillRunning } from "./processes";

// The reviewer's fork-hopper (issue: a process left by one run writes into the next run): it forks
// a child and exits every ~5 ms, so a /proc scan never holds it. `stopUid` must leave nothing of it.

const UID = 63500;
const HOPPER =
	"my $end=time+60; while(time<$end){ exit 0 if fork; select(undef,undef,undef,0.005) }";
// A live process hiding behind zombies it keeps and reaps: 40 children left unreaped for 20 ms, then
// reaped all at once, so a count that allows the zombies a scan saw has room for it.
const FARMER = `my $end=time+60; while(time<$end){ my @k; for (1..40) { my $p = fork; exit 0 if !$p; push @k, $p }
	select(undef,undef,undef,0.02); waitpid($_, 0) for @k; select(undef,undef,undef,0.006) }`;

const start = (script: string) =>
	spawn("setsid", ["perl", "-e", script], {
		uid: UID,
		gid: UID,
		cwd: "/",
		detached: true,
		stdio: "ignore",
	}).unref();

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
		start(HOPPER);
		await new Promise((r) => setTimeout(r, 300));
		expect((await liveOver(300)).length).toBeGreaterThan(0);
		await stopUid(UID, UID);
		expect(await liveOver(1500)).toEqual([]);
	});

	it("never says a uid is empty while a process hides behind zombies it reaps", async () => {
		for (let trial = 0; trial < 8; trial++) {
			start(FARMER);
			await new Promise((r) => setTimeout(r, 200));
			expect((await liveOver(100)).length).toBeGreaterThan(0);
			const outcome = await stopUid(UID, UID).then(
				() => "returned",
				(err: unknown) => {
					if (err instanceof UidStillRunning) return "threw";
					throw err;
				},
			);
			// Either it says the uid is empty and nothing of it runs, or it says it could not.
			if (outcome === "returned") expect(await liveOver(300), `trial ${trial}`).toEqual([]);
			else await stopUid(UID, UID);
		}
	});

	it("returns at once for a uid with nothing running, and refuses root's", async () => {
		expect(await stopUid(UID + 1, UID + 1)).toEqual([]);
		await expect(stopUid(0, 0)).rejects.toThrow(/refusing/);
	});
});
