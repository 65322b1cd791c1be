import {
	chmod,
	chown,
	mkdir,
	mkdtemp,
	readdir,
	readFile,
	stat,
	symlink,
	writeFile,
} from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
	bashReply,
	type OpenAiChatDouble,
	startOpenAiChatDouble,
	textOf,
} from "../../../test/doubles/models/openai-chat";
import { git } from "../../../test/support/git";
import { createTaskWorld, isRunning, LINEAR_KEY, type TaskWorld } from "../../../test/support/task";
import { ANTHROPIC_KEY } from "../../../test/support/world";

// The agent's own user (LISA_AGENT_UID/GID/HOME), with real uid switches: the task runs as its own
// process with the secrets in its environment, as a launched task does, and the repo is reached
// over authenticated HTTP, so the token is really in the task and in git's push. Needs root (the
// task must be root to start the agent as another user): skipped for a non-root developer.
//
// The agent's uid is unused on the machine and differs per test process: the task kills every
// process of that uid before it pushes, and must not kill another test run's agent.

const ROOT = process.getuid?.() === 0;
const AGENT = 200_000 + ((process.pid * 7) % 100_000);
const AWS_SECRET = "aws/SECRETaccess0123456789abcdefghijklmno";
const API_TOKEN = "lisa_ApiTokenOfTheStack0123456789abcdefghij";

let w: TaskWorld;
let llm: OpenAiChatDouble;
let home: string;
let rootOnly: string;
beforeAll(async () => {
	if (!ROOT) return;
	w = await createTaskWorld({}, { gitHttp: true });
	llm = await startOpenAiChatDouble();
	// The agent must reach its workspace, the fake CLIs and its call log; mkdtemp made them 0700.
	await chmod(w.dir, 0o755);
	home = path.join(w.dir, "agent-home");
	await mkdir(home);
	await chown(home, AGENT, AGENT);
	// A file only root may read, and a link to it in the repository: handing the workspace over
	// must change the link, not what it points to.
	rootOnly = path.join(w.dir, "root-only.txt");
	await writeFile(rootOnly, "root only\n", { mode: 0o600 });
	const seed = await mkdtemp(path.join(w.dir, "seed-"));
	await git(seed, "clone", "--quiet", w.repo.path, "repo");
	await symlink(rootOnly, path.join(seed, "repo", "root-only-link"));
	await git(path.join(seed, "repo"), "add", "-A");
	await git(path.join(seed, "repo"), "commit", "--quiet", "-m", "chore: a link");
	await git(path.join(seed, "repo"), "push", "--quiet", "origin", "main");
}, 60_000);
afterAll(async () => {
	await llm?.stop();
	await w?.stop();
});

const identity = () => ({
	LISA_AGENT_UID: String(AGENT),
	LISA_AGENT_GID: String(AGENT),
	LISA_AGENT_HOME: home,
	AWS_SECRET_ACCESS_KEY: AWS_SECRET,
	LISA_API_TOKEN: API_TOKEN,
});
describe.skipIf(!ROOT)("the agent's own user (root only)", () => {
	it("runs the agent and all it influences as that user; it reads no secret, and what it leaves running is killed before the push", async () => {
		const runId = await w.newRun(
			{
				title: "Isolated change",
				description: "lisa-fake: scan-secrets\nlisa-fake: leave-running",
			},
			`    setup: ['id -u > "$HOME/setup.uid"']
    validate: ['id -u > "$HOME/validate.uid"', 'test -f LISA_CHANGE.md']
`,
		);
		const task = await w.startTask(runId, identity());
		const { code, output } = await task.exited;
		expect(code, output).toBe(0);
		const secrets = [w.github.token, LINEAR_KEY, AWS_SECRET, API_TOKEN];
		for (const s of secrets) expect(output).not.toContain(s);

		// The step still succeeds and publishes.
		const step = (await w.run(runId)).steps[0];
		expect(step?.report).toMatchObject({ outcome: "succeeded" });
		const branch = step?.report?.branch as string;
		expect(await git(w.repo.path, "log", "-1", "--format=%s", branch)).toBe(
			"feat: isolated change",
		);
		expect(w.github.pulls("acme/api").some((p) => p.head.ref === branch)).toBe(true);

		// Everything the agent could influence ran as its user, with its HOME.
		const [call] = await w.agents.callsOf(runId);
		expect({ uid: call?.uid, gid: call?.gid, home: call?.envValues.HOME }).toEqual({
			uid: AGENT,
			gid: AGENT,
			home,
		});
		const versions = await w.agents.versions();
		expect(versions.length).toBeGreaterThan(0);
		expect(versions.every((v) => v.uid === AGENT && v.gid === AGENT)).toBe(true);
		expect(await readFile(path.join(home, "setup.uid"), "utf8")).toBe(`${AGENT}\n`);
		expect(await readFile(path.join(home, "validate.uid"), "utf8")).toBe(`${AGENT}\n`);
		// The clone was the agent's, the workspace and the publish repository the task's; a link in
		// the repository was handed over itself, not what it points to.
		expect(call?.owners).toMatchObject({
			"..": 0,
			"../repo": AGENT,
			"../publish.git": 0,
			"../repo/root-only-link": AGENT,
		});
		expect(await stat(rootOnly)).toMatchObject({ uid: 0, mode: expect.any(Number) });
		expect((await stat(rootOnly)).mode & 0o777).toBe(0o600);
		// The attempt's workspace went when it ended.
		expect(await readdir(w.workspace(runId))).toEqual([]);

		// The scan: it read what it may (its own environment, with its CLI's key: a lease of the task's
		// model broker, never the model key) and nothing else.
		const [scan] = await w.agents.scans();
		expect(scan?.uid).toBe(AGENT);
		expect(scan?.denied).toBeGreaterThan(0);
		const found = scan?.found ?? [];
		const key = found.find((f) => f.name === "ANTHROPIC_API_KEY");
		expect(key).toMatchObject({ uid: AGENT, value: expect.stringMatching(/^lisa-lease-/) });
		expect(found.every((f) => f.uid === AGENT)).toBe(true);
		for (const s of [...secrets, ANTHROPIC_KEY]) expect(JSON.stringify(found)).not.toContain(s);
		// Its parent is the task itself, whose environment holds GITHUB_TOKEN: unreadable.
		expect(scan?.ancestors[0]).toMatchObject({ pid: task.pid, uid: 0, readable: false });
		expect(scan?.ancestors.every((a) => !a.readable)).toBe(true);

		// The watcher it left in a session of its own scanned while it lived, found nothing, and
		// was killed before the push.
		const [left] = (await readFile(w.agents.log, "utf8"))
			.split("\n")
			.filter((l) => l.includes('"left"'))
			.map((l) => JSON.parse(l).left as { pid: number });
		const watchers = await w.agents.watchers();
		const watcher = watchers.find((x) => x.pid === left?.pid);
		expect(watcher?.uid).toBe(AGENT);
		for (const s of secrets) expect(JSON.stringify(watcher?.found)).not.toContain(s);
		expect(isRunning(left?.pid as number)).toBe(false);
		const events = await w.events(runId);
		const types = events.map((e) => e.type);
		const stopped = events.find((e) => e.type === "agent.processes_stopped");
		expect(stopped?.data?.pids).toContain(left?.pid);
		expect(types.indexOf("agent.processes_stopped")).toBeLessThan(types.indexOf("publish.pushed"));
		expect(types.indexOf("validation.passed")).toBeLessThan(
			types.indexOf("agent.processes_stopped"),
		);
	});

	it("without an agent user (local mode) the agent is the task's user and can read its token", async () => {
		// Why the container sets one: the same scan, as the task's own user, finds GITHUB_TOKEN.
		const runId = await w.newRun({
			title: "Not isolated",
			description: "lisa-fake: scan-secrets=ancestors",
		});
		const task = await w.startTask(runId);
		expect((await task.exited).code).toBe(0);
		const scan = (await w.agents.scans()).at(-1);
		expect(scan?.uid).toBe(0);
		expect(scan?.ancestors[0]).toMatchObject({ pid: task.pid, readable: true });
		expect(scan?.ancestors[0]?.found).toContainEqual(
			expect.objectContaining({ name: "GITHUB_TOKEN", value: w.github.token }),
		);
	});

	it("runs the built-in agent's commands as that user, away from the LLM key the task holds", async () => {
		const manifest = JSON.stringify({ prTitle: "feat: builtin isolated", prBody: "- done" });
		llm.script(
			bashReply(
				"Do the work.",
				`id -u > "$HOME/builtin.uid"; cat /proc/$PPID/environ; echo hi > builtin.txt && git add -A && git -c user.name=B -c user.email=b@example.com commit -qm "feat: builtin isolated" && printf '%s' '${manifest}' > .lisa-manifest.json`,
			),
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		const runId = await w.newRun({ title: "Builtin isolated" }, "models: [builtin]\n");
		const task = await w.startTask(runId, {
			...identity(),
			LISA_LLM_BASE_URL: llm.url,
			LISA_LLM_API_KEY: llm.apiKey,
			LISA_LLM_MODEL: "local-model",
		});
		const { code, output } = await task.exited;
		expect(code, output).toBe(0);
		const report = (await w.run(runId)).steps[0]?.report;
		expect(report, JSON.stringify(await w.events(runId))).toMatchObject({ outcome: "succeeded" });
		expect(await readFile(path.join(home, "builtin.uid"), "utf8")).toBe(`${AGENT}\n`);
		// What the command saw of its parent (the task, with the LLM key and the token) went back to
		// the model: a refusal.
		const observed = textOf(llm.requests.at(-1)?.messages.at(-1)?.content);
		expect(observed).toContain("Permission denied");
		for (const s of [llm.apiKey, w.github.token]) expect(observed).not.toContain(s);
	});

	it("hands the planning checkouts to the agent's user too", async () => {
		const runId = await w.newRun({ title: "Plan as the agent" }, "", { plan: true });
		const task = await w.startTask(runId, identity());
		const { code, output } = await task.exited;
		expect(code, output).toBe(0);
		expect((await w.run(runId)).steps[0]?.report).toMatchObject({ outcome: "succeeded" });
		const [call] = (await w.agents.calls()).filter((c) => c.target === "plan");
		expect(call?.uid).toBe(AGENT);
		expect(call?.owners).toMatchObject({ ".": AGENT, "repos/api": AGENT });
		expect(Object.keys(call?.owners ?? {}).filter((n) => n.startsWith("repos/"))).toEqual([
			"repos/api",
		]);
	});
});
