import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStackWorld, type StackWorld } from "../support/stack";
import { isRunning } from "../support/task";

// The agent task's fallback chain and supervision on the whole local stack: webhook in, fake agent
// CLIs, pull request out.

let w: StackWorld;
beforeAll(async () => {
	// Six seconds of silence is "stuck": short enough for a test, long enough that a loaded machine
	// starting the next fake CLI is not mistaken for one.
	w = await createStackWorld({
		configExtra: "models: [claude, gemini]\nlimits: {stale_output_seconds: 6, max_attempts: 1}",
	});
});
afterAll(() => w.stop());

type Events = {
	events: { type: string; message: string; step?: number; data?: Record<string, unknown> }[];
};
describe("fallback and supervision on the local stack", () => {
	it("falls back from a CLI that prints 429 Too Many Requests, and shows which model succeeded", async () => {
		const runId = await w.startRun(
			"Rate limited claude",
			"lisa-fake[claude]: stderr=429 Too Many Requests\nlisa-fake[claude]: exit=1",
		);
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]).toMatchObject({ status: "succeeded", attempt: 1, provider: "gemini" });
		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.cli)).toEqual(["claude", "gemini"]);
		const { body } = await w.api<Events>(`/api/runs/${runId}/events`);
		const types = body.events.map((e) => e.type);
		expect(types).toEqual(
			expect.arrayContaining(["agent.failed", "agent.output", "publish.pr", "run.succeeded"]),
		);
		expect(types.indexOf("agent.failed")).toBeLessThan(types.lastIndexOf("agent.started"));
		expect(body.events.find((e) => e.type === "agent.failed")?.message).toMatch(
			/claude exited with code 1: 429 Too Many Requests/,
		);
		expect(w.github.pulls("acme/api").some((p) => p.html_url === run.prUrls[0])).toBe(true);
	});

	it("kills an agent that never writes output as stuck and lets the next model finish", async () => {
		const runId = await w.startRun("Silent claude", "lisa-fake[claude]: hang");
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]?.provider).toBe("gemini");
		const { body } = await w.api<Events>(`/api/runs/${runId}/events`);
		expect(body.events.find((e) => e.type === "agent.state")?.message).toMatch(/^claude is stuck/);
		const hang = (await w.agents.hangs()).find((h) => h.cli === "claude");
		for (const pid of [hang?.hang.pid, hang?.hang.child] as number[])
			await expect.poll(() => isRunning(pid), { timeout: 15_000 }).toBe(false);
	});

	it("stops the chain at a non-transient failure and fails the run with the reason", async () => {
		const runId = await w.startRun(
			"Broken build",
			"lisa-fake[claude]: stderr=TypeError: Cannot read properties of undefined\nlisa-fake[claude]: exit=2",
		);
		const run = await w.waitForRun(runId);
		expect(run).toMatchObject({
			status: "failed",
			error: "claude exited with code 2: TypeError: Cannot read properties of undefined",
		});
		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.cli)).toEqual(["claude"]);
	});
});
