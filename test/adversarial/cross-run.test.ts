import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";

// One run's agent against the next run and the one beside it, in the default local mode (`npm
// start` as root, agents under pool uids): a process that forks away from every kill must not
// outlive its run into the next one lent the same uid, and no agent reads another run's prompt.

const ROOT = process.getuid?.() === 0;

let w: StackWorld;
/** A stack of its own whose agents take uids of `uids` only. */
function stackWith(uids: string) {
	beforeAll(async () => {
		w = await createStackWorld({
			configExtra: "limits: {max_concurrent_runs: 2}",
			env: { LISA_AGENT_UIDS: uids },
		});
	});
	afterAll(() => w?.stop());
}

/** A world-writable file the hostile processes report to. */
async function report(name: string): Promise<string> {
	const file = path.join(w.dir, name);
	await writeFile(file, "");
	await chmod(file, 0o666); // past the umask
	return file;
}

/** A script the fake agent runs (`lisa-fake: run=`): the attack. */
async function script(name: string, text: string): Promise<string> {
	const file = path.join(w.dir, name);
	await writeFile(file, text, { mode: 0o644 });
	return file;
}

const lines = async (file: string) => (await readFile(file, "utf8")).split("\n").filter(Boolean);

describe.skipIf(!ROOT)("one run's agent against the next run", () => {
	// One uid: the next run is lent the uid of the one before once it is given back.
	stackWith("62990-62990");

	it("a process forking away from every kill dies with its run: the next run lent its uid gets no file of it", async () => {
		const injected = await report("injected.log");
		const beats = await report("beats.log");
		// The reviewer's fork-hopper: forks a child and exits every ~5 ms, so it is never alive both
		// when /proc is listed and when the list is killed; each child writes into the worktree of
		// any other process of its uid.
		const hopper = await script(
			"hopper.pl",
			`use strict; use Cwd;
my ($log, $beats) = @ARGV;
my $own = getcwd();
my $end = time + 90; my $last = 0;
while (time < $end) {
	exit 0 if fork;
	if (time != $last) { $last = time; open(my $b, ">>", $beats); print $b "$$\\n"; close $b; }
	for my $d (glob "/proc/[0-9]*") {
		my $cwd = readlink("$d/cwd");
		next unless defined $cwd && $cwd ne $own && -e "$cwd/.git";
		if (open(my $f, ">", "$cwd/INJECTED.md")) {
			print $f "written by a process of an earlier run\\n"; close $f;
			open(my $l, ">>", $log); print $l "$cwd\\n"; close $l;
		}
	}
	select(undef, undef, undef, 0.005);
}
`,
		);
		const attack = await script(
			"attack.sh",
			`setsid perl ${hopper} ${injected} ${beats} </dev/null >/dev/null 2>&1 &\nsleep 1\n`,
		);
		const a = await w.waitForRun(await w.startRun("Leave a hopper", `lisa-fake: run=${attack}`));
		expect(a.status, a.error).toBe("succeeded");
		const [callA] = await w.agents.callsOf(a.id);
		// The hopper ran (it beat) while run A's agent did.
		expect((await lines(beats)).length).toBeGreaterThan(0);

		const b = await w.waitForRun(await w.startRun("The next run", "lisa-fake: sleep=4"));
		expect(b.status, b.error).toBe("succeeded");
		const [callB] = await w.agents.callsOf(b.id);
		expect(callB?.uid).toBe(callA?.uid);
		const branch = b.steps[0]?.branch ?? "";
		const files = await git(w.repo.path, "ls-tree", "-r", "--name-only", branch);
		expect(files.split("\n")).toContain("LISA_CHANGE.md");
		expect(files).not.toContain("INJECTED.md");
		expect(await lines(injected)).toEqual([]);
		// And it no longer runs: no beat for longer than a beat's second.
		const before = (await stat(beats)).size;
		await new Promise((r) => setTimeout(r, 2500));
		expect((await stat(beats)).size).toBe(before);
	});
});

describe.skipIf(!ROOT)("one run's agent against the run beside it", () => {
	stackWith("62991-62992");

	it("no agent reads another run's prompt in /proc while both run", async () => {
		const SECRET = "hunter2";
		const found = await report("found.log");
		const seen = await report("seen.log");
		const done = path.join(w.dir, "secret-run-done");
		// Reads every process's command line it can (all of them: /proc/<pid>/cmdline is
		// world-readable) until the other run is over.
		const reader = await script(
			"reader.pl",
			`use strict;
my ($found, $seen, $done) = @ARGV;
my $end = time + 60;
while (time < $end && !-e $done) {
	for my $f (glob "/proc/[0-9]*/cmdline") {
		open(my $h, "<", $f) or next; local $/; my $c = <$h>; close $h;
		next unless defined $c; $c =~ tr/\\0/ /;
		my ($pid) = $f =~ m{/proc/(\\d+)/};
		if ($c =~ /${SECRET}/) { open(my $l, ">>", $found); print $l "$pid: $c\\n"; close $l; }
		if ($c =~ /fake-agent/) { open(my $l, ">>", $seen); print $l "$pid\\n"; close $l; }
	}
	select(undef, undef, undef, 0.05);
}
`,
		);
		const read = await script("read.sh", `perl ${reader} ${found} ${seen} ${done}\n`);
		const secretRun = await w.startRun(
			"Rotate a password",
			`CONFIDENTIAL: rotate the payroll DB password ${SECRET}\nlisa-fake: sleep=12`,
		);
		// The reader starts once the confidential run's agent is running.
		await expect
			.poll(async () => (await w.agents.callsOf(secretRun)).length, { timeout: 60_000 })
			.toBe(1);
		const readerRun = await w.startRun("Read the others", `lisa-fake: run=${read}`);
		const secret = await w.waitForRun(secretRun);
		await writeFile(done, "");
		const other = await w.waitForRun(readerRun);
		expect(secret.status, secret.error).toBe("succeeded");
		expect(other.status, other.error).toBe("succeeded");
		const [victim] = await w.agents.callsOf(secretRun);
		const [attacker] = await w.agents.callsOf(readerRun);
		expect(attacker?.uid).not.toBe(victim?.uid);
		// The reader saw the victim's agent process, but not its prompt, which reached it on stdin.
		expect(await lines(seen)).toContain(String(victim?.pid));
		expect(await lines(found)).toEqual([]);
		expect(victim?.prompt).toContain(SECRET);
		expect(victim?.promptOnStdin).toBe(true);
	});
});
