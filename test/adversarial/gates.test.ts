import { chmod, chown, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWorkflowPath } from "../../src/domain/gates";
import { branches, git } from "../support/git";
import { createTaskWorld, isRunning, type TaskWorld } from "../support/task";
import { ANTHROPIC_KEY } from "../support/world";

// A hostile agent tries to get a change under .github/workflows/ pushed although the repository
// does not allow it (allow_workflow_changes: false). Each attack is a script the fake agent runs
// after its ordinary commit (test/doubles/agents/fake-agent.mjs, `run=`), through the real task
// code, real git and real processes. Whatever the step's outcome, no workflow may reach the remote.

const ROOT = process.getuid?.() === 0;
const AGENT = 300_000 + ((process.pid * 7) % 100_000);

let w: TaskWorld;
let n = 0;
beforeAll(async () => {
	w = await createTaskWorld();
	// Readable by an agent of another uid (mkdtemp makes it 0700).
	await chmod(w.dir, 0o755);
});
afterAll(() => w.stop());

/** Writes an attack script; the directive that makes the fake agent run it. */
async function attack(script: string): Promise<string> {
	const dir = path.join(w.dir, "attacks");
	await mkdir(dir, { recursive: true, mode: 0o755 });
	const file = path.join(dir, `attack-${++n}.sh`);
	await writeFile(file, `set -e\n${script}\n`, { mode: 0o644 });
	return `lisa-fake: run=${file}`;
}

/** Every path in every commit of every branch the remote has besides main, and the PRs opened. */
async function pushed(): Promise<{ paths: string[]; prs: number }> {
	const paths: string[] = [];
	for (const branch of await branches(w.repo.path)) {
		if (branch === "main") continue;
		const tip = await git(w.repo.path, "ls-tree", "-r", "-z", "--name-only", branch);
		const log = await git(w.repo.path, "log", "-z", "--name-only", "--format=", `main..${branch}`);
		paths.push(...`${tip}\0${log}`.split(/[\0\n]/).filter(Boolean));
	}
	return { paths, prs: w.github.pulls("acme/api").length };
}

/** One agent run: a refused change is not retried (the attack would only run again). */
const NO_RETRY = "limits: {max_validation_retries: 0}\n";

const commit = (message: string) =>
	`git -c user.name=Mallory -c user.email=m@example.com commit -q --allow-empty -m ${JSON.stringify(message)}`;

/** A string as bash reads it back exactly: `$'…'` with every byte outside printable ASCII escaped. */
const ansiC = (s: string) =>
	`$'${[...Buffer.from(s)]
		.map((b) =>
			b === 0x27 || b === 0x5c
				? `\\${String.fromCharCode(b)}`
				: b >= 0x20 && b < 0x7f
					? String.fromCharCode(b)
					: `\\x${b.toString(16).padStart(2, "0")}`,
		)
		.join("")}'`;

/** A background loop in a session of its own, without the attempt's mark in its environment. */
const detached = (script: string, pidFile: string) => `cat > loop.sh <<'LOOP'
${script}
LOOP
env -i PATH="$PATH" HOME="$HOME" setsid bash loop.sh > /dev/null 2>&1 < /dev/null &
echo $! > ${pidFile}`;

describe("the gates judge exactly the commits that are pushed (allow_workflow_changes: false)", () => {
	it.each([
		["non-ASCII characters", ".github/workflows/ci-\u00e9t\u00e9.yml"],
		["a tab", ".github/workflows/ci\there.yml"],
		["a newline", ".github/workflows/ci\nhere.yml"],
		["quotes and a backslash", `.github/workflows/c"i'\\x.yml`],
		["another spelling of the folder", ".GitHub/Workflows/ci.yml"],
	])(
		"refuses a workflow whose path has %s (git quotes or hides such paths)",
		async (_what, file) => {
			const runId = await w.newRun(
				{
					title: "Quoted workflow",
					description: await attack(`
f=${ansiC(file)}
mkdir -p "$(dirname "$f")"
printf 'on: push\\n' > "$f"
git add -A
${commit("ci: sneak a workflow in")}`),
				},
				NO_RETRY,
			);
			const report = await w.runTask(runId);
			expect(report).toMatchObject({ outcome: "failed", transient: false });
			expect(report?.error).toContain("changes under .github/workflows/ are not allowed");
			const { paths, prs } = await pushed();
			expect(paths.filter(isWorkflowPath)).toEqual([]);
			expect(prs).toBe(0);
		},
	);

	it.each([
		[
			"the commit",
			`W=$(git rev-parse HEAD)
B=$(git commit-tree "$(git rev-parse 'HEAD~1^{tree}')" -p HEAD~1 -m "docs: nothing to see")
git replace "$W" "$B"`,
		],
		[
			"the commit's tree",
			`git replace "$(git rev-parse 'HEAD^{tree}')" "$(git rev-parse 'HEAD~1^{tree}')"`,
		],
	])("is not fooled by git replace of %s", async (_what, replace) => {
		const runId = await w.newRun(
			{
				title: "Replaced history",
				description: await attack(`
mkdir -p .github/workflows
printf 'on: push\\n' > .github/workflows/ci.yml
git add -A
${commit("ci: a workflow")}
${replace}
# In the agent's repository the workflow is out of sight now:
test -z "$(git diff --name-only HEAD~1 HEAD -- .github)"`),
			},
			NO_RETRY,
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed" });
		expect(report?.error).toContain(".github/workflows/ci.yml");
		expect((await pushed()).paths.filter(isWorkflowPath)).toEqual([]);
	});

	it.each([
		[
			"commits a workflow",
			`mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml && git add -A && ${commit("ci: from the tests")}`,
		],
		[
			"moves the branch to a commit with a workflow",
			`mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml && git add -A && T=$(git write-tree) && git reset -q && git reset -q --hard "$(git commit-tree "$T" -p HEAD -m 'chore: tidy')"`,
		],
	])(
		"refuses the work when the validate command (a script the agent wrote) %s",
		async (_what, evil) => {
			const runId = await w.newRun(
				{
					title: "Tests that commit",
					description: await attack(`
cat > check.sh <<'CHECK'
${evil}
CHECK
git add check.sh
${commit("test: add the checks")}`),
				},
				`    validate: ['bash check.sh']\n${NO_RETRY}`,
			);
			const report = await w.runTask(runId);
			expect(report).toMatchObject({ outcome: "failed", transient: false });
			expect(report?.error).toContain("the commit changed while the validate commands ran");
			const { paths, prs } = await pushed();
			expect(paths.filter(isWorkflowPath)).toEqual([]);
			expect(prs).toBe(0);
		},
	);

	it("refuses the commit validated when a process the agent left moves the branch after it", async () => {
		const ready = path.join(w.dir, "attacks", `validating-${n + 1}`);
		const pidFile = path.join(w.dir, "attacks", `loop-${n + 1}.pid`);
		// Unmarked and in its own session, so without an agent user nothing finds the loop: once
		// validation is under way it commits workflows until it is killed.
		const runId = await w.newRun(
			{
				title: "Background committer",
				description: await attack(
					detached(
						`while [ ! -e ${ready} ]; do sleep 0.02; done
while true; do
	mkdir -p .github/workflows; date >> .github/workflows/ci.yml
	git add -A; git -c user.name=M -c user.email=m@example.com commit -qm bg || true
	sleep 0.01
done`,
						pidFile,
					),
				),
			},
			`    validate: ['touch ${ready}', 'sleep 1']\n${NO_RETRY}`,
		);
		try {
			const report = await w.runTask(runId);
			expect((await pushed()).paths.filter(isWorkflowPath)).toEqual([]);
			expect(report).toMatchObject({ outcome: "failed" });
			expect(report?.error).toContain("the commit changed while the validate commands ran");
		} finally {
			// Without an agent user the loop outlives the attempt: what that mode risks
			// (docs/security.md › `npm start` as another user (or `LISA_AGENT_UIDS=off`)).
			process.kill(-Number(await readFile(pidFile, "utf8")), "SIGKILL");
		}
	});

	it.each([
		[
			"a file",
			`printf 'KEY=%s\\n' "$ANTHROPIC_API_KEY" > .env.example && git add -A && ${commit("chore: env")}`,
		],
		[
			"a file, base64-encoded",
			`printf 'token: %s\\n' "$(printf '%s' "x:$ANTHROPIC_API_KEY" | base64 -w0)" > auth.yml && git add -A && ${commit("chore: auth")}`,
		],
		[
			"a commit a later one removes",
			`echo "$ANTHROPIC_API_KEY" > key.txt && git add -A && ${commit("chore: key")} && git rm -q key.txt && ${commit("chore: no key")}`,
		],
		[
			"a commit message",
			`git -c user.name=M -c user.email=m@example.com commit -q --allow-empty -m "debug $ANTHROPIC_API_KEY"`,
		],
	])(
		"refuses commits that carry the agent's own key in %s, and never says the key",
		async (_what, leak) => {
			const runId = await w.newRun(
				{ title: "Leaky commit", description: await attack(leak) },
				NO_RETRY,
			);
			const report = await w.runTask(runId);
			expect(report).toMatchObject({ outcome: "failed", transient: false });
			expect(report?.error).toContain("the change holds a secret Lisa knows");
			// The key the agent holds is its lease of the model broker (the real one it never sees).
			const [call] = await w.agents.callsOf(runId);
			const lease = call?.envValues.ANTHROPIC_API_KEY ?? "";
			expect(lease).toMatch(/^lisa-lease-/);
			for (const key of [lease, ANTHROPIC_KEY]) {
				expect(JSON.stringify(await w.events(runId))).not.toContain(key);
				expect(JSON.stringify(report)).not.toContain(key);
			}
			expect((await pushed()).prs).toBe(0);
			expect(await branches(w.repo.path)).toEqual(["main"]);
		},
	);

	it.skipIf(!ROOT)(
		"with an agent user, what the agent left running (marked or not) is killed, and Lisa's repository is not its to write",
		async () => {
			const home = path.join(w.dir, "agent-home");
			await mkdir(home, { recursive: true });
			await chown(home, AGENT, AGENT);
			const pidFile = path.join(home, "loop.pid");
			const tried = path.join(home, "publish-write");
			const runId = await w.newRun({
				title: "Background writer as the agent",
				description: await attack(
					`${detached(
						`while true; do
	{ date >> ../publish.git/HEAD; } 2>> ${tried} || true
	sleep 0.01
done`,
						pidFile,
					)}
sleep 0.3`,
				),
			});
			const task = await w.startTask(runId, {
				LISA_AGENT_UID: String(AGENT),
				LISA_AGENT_GID: String(AGENT),
				LISA_AGENT_HOME: home,
			});
			const { code, output } = await task.exited;
			expect(code, output).toBe(0);
			const report = (await w.run(runId)).steps[0]?.report;
			expect(report, report?.error).toMatchObject({ outcome: "succeeded" });
			expect(await readFile(tried, "utf8")).toContain("Permission denied");
			expect(isRunning(Number(await readFile(pidFile, "utf8")))).toBe(false);
			const types = (await w.events(runId)).map((e) => e.type);
			expect(types.indexOf("agent.processes_stopped")).toBeGreaterThan(-1);
			expect(types.indexOf("agent.processes_stopped")).toBeLessThan(
				types.indexOf("publish.pushed"),
			);
		},
	);
});
