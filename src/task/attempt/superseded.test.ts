import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branches } from "../../../test/support/git";
import { createTaskWorld, isRunning, type TaskWorld } from "../../../test/support/task";
import { branchName } from "../../domain/run";

// A task whose step moved on (the pipeline retried or stopped it) while it worked: its next write
// of the step is refused, and it stops its agent and leaves without pushing or reporting.

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld();
});
afterAll(() => w.stop());

async function expectNothingPublished(runId: string) {
	const run = await w.run(runId);
	const step = run.steps[0];
	expect(step?.attempt).toBe(2);
	expect(step?.report).toBeUndefined();
	const branch = branchName(
		run.config?.branch_prefix ?? "",
		run.issue?.key ?? "",
		run.issue?.title ?? "",
	);
	expect(await branches(w.repo.path)).not.toContain(branch);
	expect(w.github.pulls("acme/api").some((p) => p.head.ref === branch)).toBe(false);
	const types = (await w.events(runId)).map((e) => e.type);
	expect(types).toContain("attempt.superseded");
	expect(types).not.toContain("publish.pushed");
}

describe("a superseded attempt", () => {
	it("stops its agent when a heartbeat is refused, and pushes and reports nothing", async () => {
		const runId = await w.newRun({ title: "Taken over", description: "lisa-fake: sleep=120" });
		const task = w.runTask(runId);
		await expect
			.poll(async () => (await w.agents.callsOf(runId)).length, { timeout: 60_000 })
			.toBe(1);
		// The pipeline gives the step to a new attempt; the task's next heartbeat (≤ 10 s) is refused.
		await w.nextAttempt(runId);
		expect(await task).toBeUndefined();
		await expectNothingPublished(runId);
		const [call] = await w.agents.callsOf(runId);
		expect(isRunning(call?.pid as number)).toBe(false);
	}, 90_000);

	it("checks again right before pushing: refused after validation, it does not push", async () => {
		const ready = path.join(w.dir, "validate-ready");
		const go = path.join(w.dir, "validate-go");
		const runId = await w.newRun(
			{ title: "Taken over while validating" },
			`    validate: ['touch ${ready}; while [ ! -f ${go} ]; do sleep 0.1; done']\n`,
		);
		const task = w.runTask(runId);
		await expect.poll(() => existsSync(ready), { timeout: 60_000 }).toBe(true);
		await w.nextAttempt(runId);
		await writeFile(go, "");
		expect(await task).toBeUndefined();
		await expectNothingPublished(runId);
		expect((await w.events(runId)).map((e) => e.type)).not.toContain("publish.pr");
	}, 90_000);
});
