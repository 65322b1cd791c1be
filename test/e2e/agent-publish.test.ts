import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitHttpServer } from "../doubles/git-http/server";
import { DEFAULT_GITHUB_TOKEN } from "../doubles/github/server";
import { git } from "../support/git";
import { type StackProcess, startStackProcess } from "../support/process-stack";
import { createStackWorld, type StackWorld } from "../support/stack";
import { ANTHROPIC_KEY as ANTHROPIC } from "../support/world";

// Publishing on the whole local stack, run as `lisa start` in its own process with debug logs,
// against a git host that requires the token (smart HTTP): where does the token go?

let server: GitHttpServer;
let w: StackWorld;
let stack: StackProcess;
beforeAll(async () => {
	w = await createStackWorld({
		startStack: false,
		gitHttp: true,
		env: { LOG_LEVEL: "debug" },
		config: ({ repos }) => `source: linear
provider: claude
source_config: {team: ENG, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}
repos:
  - name: api
    url: ${repos.api?.url}
    slug: acme/api
    validate:
      - 'test ! -f status.txt || test "$(cat status.txt)" = ok || { echo "status is $(cat status.txt), expected ok"; exit 1; }'
`,
	});
	if (!w.gitHttp) throw new Error("no git host");
	server = w.gitHttp;
	stack = await startStackProcess(w.env);
	w.attach(stack.url, stack.token);
});
afterAll(async () => {
	await stack?.stop();
	await w.stop();
});

describe("publishing with a token", () => {
	it("pushes and opens the PR; the token appears nowhere in the agent's env, events or logs", async () => {
		const runId = await w.startRun("Private repo change", "lisa-fake: print-env=ANTHROPIC_API_KEY");
		const run = await w.waitForRun(runId).catch((err) => {
			throw new Error(`${err.message}\n${stack.output()}`);
		});
		expect(run.status).toBe("succeeded");
		const branch = run.steps[0]?.branch as string;
		expect(await git(path.join(w.dir, "api.git"), "log", "-1", "--format=%s", branch)).toBe(
			"feat: private repo change",
		);
		expect(w.github.pulls("acme/api").find((p) => p.head.ref === branch)?.html_url).toBe(
			run.prUrls[0],
		);

		// The git host got the token only as the password of the credential exchange.
		const pushed = server.requests.filter(
			(r) => r.authorized && r.url.includes("git-receive-pack"),
		);
		expect(pushed.length).toBeGreaterThan(0);
		expect(
			server.requests.filter((r) => r.authorized).every((r) => r.user === "x-access-token"),
		).toBe(true);
		expect(server.requests.some((r) => r.url.includes(DEFAULT_GITHUB_TOKEN))).toBe(false);

		// Not in the agent's environment…
		const [call] = await w.agents.callsOf(runId);
		expect(call?.env).not.toContain("GITHUB_TOKEN");
		expect(JSON.stringify(call?.envValues)).not.toContain(DEFAULT_GITHUB_TOKEN);
		// …nor the run's events (where the agent's own key shows redacted)…
		const events = JSON.stringify((await w.api(`/api/runs/${runId}/events`)).body);
		expect(events).toContain("ANTHROPIC_API_KEY=[redacted]");
		expect(events).not.toContain(ANTHROPIC);
		expect(events).not.toContain(DEFAULT_GITHUB_TOKEN);
		// …nor the task's log or the stack's log; the workspace is gone with its attempt.
		const dataDir = w.env.LISA_DATA_DIR as string;
		const taskLog = await readFile(
			path.join(dataDir, "logs", runId, "step-0-attempt-1.log"),
			"utf8",
		);
		expect(taskLog).toMatch(/"msg":"step finished"/);
		expect(taskLog).toMatch(/"type":"agent.output"/);
		for (const text of [taskLog, stack.output()]) {
			expect(text).not.toContain(DEFAULT_GITHUB_TOKEN);
			expect(text).not.toContain(ANTHROPIC);
		}
		await expect
			.poll(() => existsSync(path.join(dataDir, "workspaces", runId)), { timeout: 10_000 })
			.toBe(false);
	});

	it("validation fails once, then passes on the retry, with the failure text in the second prompt", async () => {
		const runId = await w.startRun("Fix the status", "lisa-fake: broken-until-retry");
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(2);
		expect(calls[1]?.prompt.split("\n")[0]).toBe("[RETRY - MUST COMPLETE]");
		expect(calls[1]?.prompt).toContain("status is broken, expected ok");
		const { body } = await w.api<{ events: { type: string }[] }>(`/api/runs/${runId}/events`);
		expect(body.events.map((e) => e.type)).toEqual(
			expect.arrayContaining(["validation.failed", "validation.passed", "run.succeeded"]),
		);
		expect(
			await git(path.join(w.dir, "api.git"), "show", `${run.steps[0]?.branch}:status.txt`),
		).toBe("ok");
	});
});
