import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EpicAnswer } from "../../src/api/schemas";
import {
	epicPlanDirective,
	epicPlanFiles,
	type PlannedTask,
	withTaskDirective,
} from "../doubles/agents/directives";
import { createStackWorld, type StackWorld } from "../support/stack";

// The outside review's item 9: after an epic was cancelled mid-way, its run and its task's run were
// cancelled, yet `GET /api/epics/:id` still showed the task "running" minutes later. On the local
// stack with Linear and the fake agent: an epic of three tasks in a row, whose first is quick and
// second works for minutes, is cancelled while the second works; every task must then show how its
// run ended (one at a time: no agent runs beside another).

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ configExtra: "limits: {max_attempts: 1}" });
});
afterAll(() => w.stop());

const WAIT = 240_000;
const t = (id: string, title: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title,
	repo: "api",
	dependsOn,
});

/** `GET /api/epics/:id` once `done` holds (or the last answer), polled as a dashboard would. */
async function waitForEpic(id: string, done: (e: EpicAnswer) => boolean, timeoutMs: number) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		// 404 until the intake created the run.
		const { status, body } = await w.api<EpicAnswer>(`/api/epics/${id}`);
		if (status === 200 && (done(body) || Date.now() > deadline)) return body;
		if (Date.now() > deadline) throw new Error(`GET /api/epics/${id}: ${status}`);
		await new Promise((r) => setTimeout(r, 250));
	}
}

describe("item 9: a cancelled epic's tasks", () => {
	it("show how their runs ended, never running", async () => {
		// 01 is quick, 02 works for ten minutes after it, 03 waits for 02.
		const files = epicPlanFiles([
			t("01", "Add the model"),
			t("02", "Serve it", "01"),
			t("03", "Note it", "02"),
		]);
		const plan = withTaskDirective(files, "02", "lisa-fake: sleep=600");
		const issue = w.issue("Reports, cancelled half-way", epicPlanDirective(plan), ["lisa-epic"]);
		const res = await w.sendWebhook(w.createdWebhook(issue));
		expect(res.status).toBe(202);
		const { runId } = (await res.json()) as { runId: string };

		const working = await waitForEpic(
			runId,
			(e) => e.tasks.find((x) => x.id === "02")?.status === "running",
			WAIT,
		);
		expect(working.tasks.map((x) => [x.id, x.status])).toEqual([
			["01", "done"],
			["02", "running"],
			["03", "waiting"],
		]);
		const slow = working.tasks.find((x) => x.id === "02")?.runId as string;
		await w.waitForRun(slow, (r) => r.steps[0]?.status === "running", WAIT);

		expect((await w.api(`/api/runs/${runId}/cancel`, { method: "POST" })).status).toBe(202);
		expect((await w.waitForRun(runId, undefined, WAIT)).status).toBe("cancelled");
		expect((await w.waitForRun(slow, undefined, WAIT)).status).toBe("cancelled");

		// Both runs ended; give the epic what a dashboard's next refreshes would, then look.
		const after = await waitForEpic(
			runId,
			(e) => !e.tasks.some((x) => x.status === "running"),
			30_000,
		);
		expect(after.status).toBe("cancelled");
		expect(after.tasks.map((x) => [x.id, x.status, x.reason])).toEqual([
			["01", "done", undefined],
			["02", "cancelled", `its epic's run ${runId} cancelled`],
			["03", "blocked", "task 02 cancelled"],
		]);
		// The epic's one progress comment says the same, edited just after.
		const progress = () =>
			w.linear.state.comments.filter(
				(c) => c.issueId === issue.id && c.body.includes("tasks done"),
			);
		const deadline = Date.now() + 10_000;
		while (progress()[0]?.body.includes("in progress") && Date.now() < deadline)
			await new Promise((r) => setTimeout(r, 250));
		expect(progress()).toHaveLength(1);
		expect(progress()[0]?.body).not.toContain("in progress");
		expect(progress()[0]?.body).toMatch(/02 Serve it \(api, \S+\): cancelled/);
	}, 600_000);
});
