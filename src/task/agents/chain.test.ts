import { existsSync } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branches, git } from "../../../test/support/git";
import { createTaskWorld, isRunning, type TaskWorld } from "../../../test/support/task";
import { ANTHROPIC_KEY } from "../../../test/support/world";

// The fallback chain, supervision and the providers' argv, through the real task code against the
// fake agent CLIs (real processes), a real store and a bare repo.

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld();
});
afterAll(() => w.stop());

describe("fallback chain", () => {
	it("moves from a CLI that prints 429 Too Many Requests to the next, and records it", async () => {
		const runId = await w.newRun(
			{
				title: "Fall back",
				description:
					"lisa-fake[claude]: stderr=Error: 429 Too Many Requests\nlisa-fake[claude]: exit=1",
			},
			"models: [claude, 'gemini:gemini-2.5-pro']",
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "succeeded", provider: "gemini:gemini-2.5-pro" });
		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.cli)).toEqual(["claude", "gemini"]);
		expect(calls[1]?.argv).toEqual([
			"--skip-trust",
			"--yolo",
			"--output-format",
			"stream-json",
			"-m",
			"gemini-2.5-pro",
		]);
		expect(calls.map((c) => c.promptOnStdin)).toEqual([true, true]);
		const step = (await w.run(runId)).steps[0];
		expect(step?.provider).toBe("gemini:gemini-2.5-pro");
		const events = await w.events(runId);
		const failed = events.find((e) => e.type === "agent.failed");
		expect(failed?.message).toMatch(/^claude exited with code 1: Error: 429 Too Many Requests/);
		expect(failed?.message).toMatch(/trying gemini:gemini-2\.5-pro/);
		expect(failed?.data).toMatchObject({ transient: true });
		expect(events.filter((e) => e.type === "agent.started").map((e) => e.data?.provider)).toEqual([
			"claude",
			"gemini:gemini-2.5-pro",
		]);
	});

	it("stops at a non-transient failure with its reason", async () => {
		const runId = await w.newRun(
			{
				title: "Real failure",
				description:
					"lisa-fake[claude]: stderr=SyntaxError: Unexpected token\nlisa-fake[claude]: exit=3",
			},
			"models: [claude, gemini]",
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed", transient: false });
		expect(report?.error).toBe("claude exited with code 3: SyntaxError: Unexpected token");
		expect((await w.agents.callsOf(runId)).map((c) => c.cli)).toEqual(["claude"]);
	});

	it("skips a provider that is not installed, and reports a chain that ran out as transient", async () => {
		// Only claude on PATH: codex is missing.
		const bin = path.join(w.dir, "only-claude");
		await mkdir(bin, { recursive: true });
		await symlink(path.join(w.agents.bin, "claude"), path.join(bin, "claude")).catch(() => {});
		const env = { PATH: `${bin}:/usr/bin:/bin` };
		const ok = await w.newRun({ title: "Codex missing" }, "models: [codex, claude]");
		expect(await w.runTask(ok, env)).toMatchObject({ outcome: "succeeded", provider: "claude" });
		expect((await w.events(ok)).find((e) => e.type === "agent.unavailable")?.message).toBe(
			"codex is not installed or not in PATH; trying claude",
		);

		const out = await w.newRun(
			{
				title: "All rate limited",
				description: "lisa-fake: stderr=rate limit exceeded\nlisa-fake: exit=1",
			},
			"models: [claude, codex]",
		);
		const report = await w.runTask(out, env);
		expect(report).toMatchObject({ outcome: "failed", transient: true });
		expect(report?.error).toBe(
			"all models failed: 1. claude: claude exited with code 1: rate limit exceeded; 2. codex: codex is not installed or not in PATH",
		);
	});

	it("passes each CLI its documented argv and model flag", async () => {
		const runId = await w.newRun(
			{
				title: "Argv",
				description: "lisa-fake[claude,gemini,opencode]: exit=1\nlisa-fake: stderr=overloaded",
			},
			"models: ['claude:opus', gemini, 'opencode:anthropic/claude-sonnet', 'codex:o4']",
		);
		expect(await w.runTask(runId)).toMatchObject({ outcome: "succeeded", provider: "codex:o4" });
		// The whole argv: the prompt is on stdin (codex's "-" says so), never an argument.
		const calls = await w.agents.callsOf(runId);
		expect(calls.every((c) => c.promptOnStdin)).toBe(true);
		expect(calls.map((c) => [c.cli, ...c.argv])).toEqual([
			[
				"claude",
				"-p",
				"--dangerously-skip-permissions",
				"--output-format",
				"stream-json",
				"--verbose",
				"--model",
				"opus",
			],
			["gemini", "--skip-trust", "--yolo", "--output-format", "stream-json"],
			[
				"opencode",
				"run",
				"--format",
				"json",
				"--pure",
				"--title",
				"Lisa",
				"-m",
				"anthropic/claude-sonnet",
			],
			[
				"codex",
				"exec",
				"--json",
				"--strict-config",
				"--dangerously-bypass-approvals-and-sandbox",
				"--ephemeral",
				"--color",
				"never",
				"--model",
				"o4",
				"-",
			],
		]);
	});
});

describe("supervision", () => {
	it("classifies a silent agent as stuck, kills its process group and falls back", async () => {
		const runId = await w.newRun(
			{ title: "Hangs", description: "lisa-fake[claude]: hang" },
			"models: [claude, gemini]\nlimits: {stale_output_seconds: 4}",
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "succeeded", provider: "gemini" });
		const hang = (await w.agents.hangs()).find((h) => h.cli === "claude");
		expect(hang).toBeDefined();
		// The agent and the child it started are gone.
		for (const pid of [hang?.hang.pid as number, hang?.hang.child as number])
			await expect.poll(() => isRunning(pid), { timeout: 15_000 }).toBe(false);
		const events = await w.events(runId);
		expect(events.find((e) => e.type === "agent.state")?.message).toMatch(
			/^claude is stuck: no output for \d+ s/,
		);
		expect(events.find((e) => e.type === "agent.failed")?.message).toMatch(
			/^claude produced no output for 4 s and was killed as stuck/,
		);
	});

	it("writes heartbeats and agent state, and sends output tails to the timeline", async () => {
		const runId = await w.newRun({ title: "Chatty", description: "lisa-fake: sleep=2" });
		const seen = new Set<string>();
		const watch = setInterval(async () => {
			const s = (await w.run(runId)).steps[0];
			if (s?.agentState) seen.add(s.agentState);
		}, 100);
		const report = await w.runTask(runId).finally(() => clearInterval(watch));
		expect(report?.outcome).toBe("succeeded");
		expect(seen).toContain("in_progress");
		const step = (await w.run(runId)).steps[0];
		expect(step).toMatchObject({ agentState: "completed", heartbeatAt: expect.any(String) });
		const output = (await w.events(runId)).filter((e) => e.type === "agent.output");
		expect(output.map((e) => e.message).join("")).toMatch(/working… 1\/2[\s\S]*done: Chatty/);
	});

	it("stops the agent at the hard step timeout and fails without trying another model", async () => {
		const runId = await w.newRun(
			{ title: "Too slow", description: "lisa-fake: sleep=60" },
			"models: [claude, gemini]\nlimits: {step_timeout_minutes: 0.05}",
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed", transient: false });
		expect(report?.error).toBe("step timed out after 0.05 minutes");
		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.cli)).toEqual(["claude"]);
		await expect.poll(() => isRunning(calls[0]?.pid as number), { timeout: 15_000 }).toBe(false);
	});
});

describe("providers", () => {
	it("hands a prompt too long for stdin over in a file, whole", async () => {
		const long = `${"Context line that matters.\n".repeat(10_000)}THE END OF THE DESCRIPTION`;
		const runId = await w.newRun({ title: "Long prompt", description: long });
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "succeeded" });
		const [call] = await w.agents.callsOf(runId);
		expect(call?.promptFile).toMatch(/scratch\/prompt-claude-\d+\.md$/);
		expect(call?.promptOnStdin).toBe(true);
		expect(call?.argv.join(" ")).not.toContain("Context line");
		expect(call?.prompt).toContain(long);
		// Outside the worktree, never committed, and gone afterwards.
		expect(call?.promptFile?.startsWith(path.join(w.workspace(runId), "scratch"))).toBe(true);
		expect(existsSync(call?.promptFile as string)).toBe(false);
		expect(await git(w.repo.path, "ls-tree", "-r", "--name-only", report?.branch as string)).toBe(
			"LISA_CHANGE.md\nREADME.md",
		);
	});

	it("lets claude use its own worktree: Lisa finds it and publishes its branch", async () => {
		const runId = await w.newRun({ title: "Native worktree" }, "    native_worktree: true\n");
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "succeeded", provider: "claude" });
		const [call] = await w.agents.callsOf(runId);
		const name = call?.argv[call.argv.indexOf("--worktree") + 1];
		expect(name).toMatch(/^lisa-feat-eng-\d+-native-worktree$/);
		expect(call?.cwd).toBe(path.join(w.workspace(runId), "repo"));
		expect(call?.prompt).toContain(
			`write the manifest file \`${path.join(w.workspace(runId), "repo", ".lisa-manifest.json")}\``,
		);
		// Published under Lisa's branch name, from claude's branch.
		const branch = report?.branch as string;
		expect(await branches(w.repo.path)).toContain(branch);
		expect(await git(w.repo.path, "log", "-1", "--format=%s", branch)).toBe(
			"feat: native worktree",
		);
		expect(w.github.pulls("acme/api").find((p) => p.head.ref === branch)).toBeDefined();
		// The attempt's workspace, claude's worktree in it, went when the attempt ended.
		expect(existsSync(path.join(w.workspace(runId), "repo"))).toBe(false);
	});
});

describe("secrets", () => {
	it("gives the agent only its CLI's variables and redacts what it prints", async () => {
		const runId = await w.newRun({
			title: "Leaky agent",
			description: "lisa-fake: print-env=ANTHROPIC_API_KEY\nlisa-fake: sleep=1",
		});
		expect(await w.runTask(runId)).toMatchObject({ outcome: "succeeded" });
		const [call] = await w.agents.callsOf(runId);
		expect(call?.env).toContain("ANTHROPIC_API_KEY");
		expect(call?.env).not.toContain("GITHUB_TOKEN");
		expect(call?.env).not.toContain("LINEAR_API_KEY");
		expect(call?.env).not.toContain("GITHUB_API_URL");
		expect(JSON.stringify(call?.envValues)).not.toContain(w.github.token);
		const events = JSON.stringify(await w.events(runId));
		expect(events).toContain("ANTHROPIC_API_KEY=[redacted]");
		expect(events).not.toContain(ANTHROPIC_KEY);
		expect(events).not.toContain(w.github.token);
	});
});
