import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStackProcess } from "../support/process-stack";
import { createStackWorld, type StackWorld } from "../support/stack";

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ startStack: false });
});
afterAll(() => w.stop());

describe("(e) the local stack dies mid-run", () => {
	it("re-drives the run on the next start instead of leaving it running forever", async () => {
		const first = await startStackProcess(w.env);
		w.attach(first.url, first.token);
		const issue = w.issue("Survive a crash", "lisa-fake: sleep=4");
		const res = await w.sendWebhook(w.createdWebhook(issue));
		expect(res.status).toBe(202);
		const { runId } = (await res.json()) as { runId: string };

		// Wait until the agent is actually working, then pull the plug.
		const running = await w
			.waitForRun(
				runId,
				(r) => r.steps[0]?.status === "running" && r.steps[0]?.agentState === "in_progress",
				30_000,
			)
			.catch((err) => {
				throw new Error(`${err.message}\n${first.output()}`);
			});
		const orphanTask = running.steps[0]?.taskId;
		await first.kill();

		const second = await startStackProcess(w.env);
		try {
			w.attach(second.url, second.token);
			const run = await w.waitForRun(runId, undefined, 60_000);
			expect(run.status).toBe("succeeded");
			expect(run.steps[0]?.attempt).toBe(2);
			expect(run.steps[0]?.taskId).not.toBe(orphanTask);
			// The orphaned first attempt was stopped: one agent call per attempt, one PR.
			const calls = await w.agents.callsOf(runId);
			expect(calls).toHaveLength(2);
			expect(w.github.pulls("acme/api")).toHaveLength(1);
			expect(w.linear.stateName(issue)).toBe("In Review");
			const events = await w.api<{ events: { type: string; message: string }[] }>(
				`/api/runs/${runId}/events`,
			);
			const lost = events.body.events.find((e) => e.type === "step.lost");
			expect(lost?.message).toMatch(
				/^the agent task local:\d+:\S+ stopped without reporting a result$/,
			);
			expect(events.body.events.map((e) => e.type)).toContain("step.retry");
		} finally {
			await second.stop();
		}
	});
});
