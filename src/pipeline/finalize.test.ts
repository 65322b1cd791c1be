import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import { recoverOrphans } from "./poll";
import { sweep } from "./sweeper";

// What a finished run still owes: stopping the tasks of steps cancelled with it, and its tracker
// updates, before the issue is anyone else's.

let w: PipelineWorld;
beforeAll(async () => {
	// Two repos: runs plan first, and steps of one order run side by side.
	w = await pipelineWorld({ repos: ["api", "docs"], limits: "parallel_steps: 2" });
});
afterAll(() => w.stop());
afterEach(() => expect(w.unused()).toEqual([]));

const PLAN = {
	steps: [
		{ repo: "api", scope: "the endpoint", order: 1 },
		{ repo: "docs", scope: "its page", order: 1 },
	],
};
const throttled = () =>
	Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException", $fault: "client" });

/** A run through intake, planned, with both repo steps' tasks running. */
async function working(title: string) {
	const issue = w.issue(title);
	const runId = w.deps.newRunId();
	await w.request(issue, runId);
	await w.settle();
	await w.finishTask(runId, 0, 1, { plan: PLAN });
	await w.settle();
	const run = await w.store.getRun(runId);
	expect(run?.steps.map((s) => [s.repo, s.status])).toEqual([
		["*", "succeeded"],
		["api", "running"],
		["docs", "running"],
	]);
	return { issue, runId, tasks: run?.steps.map((s) => s.taskId ?? "") ?? [] };
}

const lastStatus = (taskId: string) => w.ecs.tasks.get(taskId)?.lastStatus;

describe("the tasks of cancelled steps (issue 4)", () => {
	it("are stopped even when stopping failed as the run was cancelled", async () => {
		const { runId, tasks } = await working("Cancel me");
		w.ecs.hooks.stop = async () => {
			throw throttled();
		};
		await w.deps.queue.send("events", {
			type: "run.cancel",
			runId,
			reason: "stopped from the API",
			requestedAt: w.now().toISOString(),
		});
		// The stop failed and the task still runs: the message fails, to be retried.
		expect(await w.deliver("events", { dropFailed: true })).toEqual({ handled: 1, failed: 1 });
		let run = await w.store.getRun(runId);
		expect(run?.status).toBe("cancelled");
		expect(run?.tracker.done).not.toBe(true);
		// A task of a cancelled step gets false for its writes (and aborts on that).
		expect(await w.heartbeat(runId, 1, 1)).toBe(false);
		expect(await w.finishTask(runId, 2, 1, { prUrl: "https://github.com/acme/docs/pull/1" })).toBe(
			false,
		);

		// The sweeper finishes the run: the tasks are stopped, then the tracker is told.
		w.advance(31_000);
		await sweep(w.deps);
		expect([lastStatus(tasks[1] ?? ""), lastStatus(tasks[2] ?? "")]).toEqual([
			"STOPPED",
			"STOPPED",
		]);
		run = await w.store.getRun(runId);
		expect(run?.tracker).toMatchObject({ tasksStopped: true, done: true });
		expect(run?.steps[2]?.prUrl).toBeUndefined();
		const events = await w.timeline(runId);
		expect(events.find((e) => e.type === "task.stop_failed")?.message).toMatch(
			/^could not stop arn:aws:ecs:.*: Rate exceeded$/,
		);
	});

	it("are stopped when a sibling failed and stopping failed at first", async () => {
		const { runId, tasks } = await working("One repo fails");
		w.ecs.hooks.stop = async () => {
			throw throttled();
		};
		await w.finishTask(runId, 1, 1, { error: "tests fail" });
		expect(await w.deliver("events", { dropFailed: true })).toEqual({ handled: 1, failed: 1 });
		let run = await w.store.getRun(runId);
		expect(run?.steps.map((s) => s.status)).toEqual(["succeeded", "failed", "cancelled"]);
		expect(lastStatus(tasks[2] ?? "")).toBe("RUNNING");

		w.advance(31_000);
		await sweep(w.deps);
		expect(lastStatus(tasks[2] ?? "")).toBe("STOPPED");
		run = await w.store.getRun(runId);
		expect(run?.tracker.done).toBe(true);
		// Stopped once: a later finalize (a redelivered report) does not stop again.
		const stops = w.ecs.stopped.length;
		await w.finishTask(runId, 1, 1, { error: "tests fail" });
		await w.settle();
		expect(w.ecs.stopped).toHaveLength(stops);
	});
});

describe("an issue whose finished run still updates the tracker (issue 5)", () => {
	it("makes a new run wait queued until the old run's updates landed", async () => {
		const { issue, runId: first } = await working("Failed, then asked again");
		// The first run fails for good; moving the issue back to Todo fails (Linear is busy).
		w.gate.failNext(/mutation updateIssue/);
		await w.finishTask(first, 1, 1, { error: "tests fail" });
		expect(await w.deliver("events", { dropFailed: true })).toEqual({ handled: 1, failed: 1 });
		expect((await w.store.getRun(first))?.tracker.done).not.toBe(true);

		const second = w.deps.newRunId();
		await w.request(issue, second);
		await w.settle();
		let run = await w.store.getRun(second);
		expect(run?.status).toBe("queued");
		expect(run?.waitingSince).toBeDefined();
		expect(await w.store.issueLockHolder("linear", issue.id)).toBe(first);
		const waiting = (await w.timeline(second)).filter((e) => e.type === "run.waiting");
		expect(waiting.map((e) => e.message)).toEqual([
			`waiting for the issue's previous run ${first} (failed) to finish updating the tracker`,
		]);

		// Orphan recovery leaves the issue to the run that still finishes it.
		const state = w.deps.config();
		if (state.status !== "ok") throw new Error("no config");
		expect((await recoverOrphans(w.deps, state.config)).map((i) => i.id)).not.toContain(issue.id);

		// The sweeper finishes the first run; the second starts after it, on top of its updates.
		w.advance(61_000);
		await sweep(w.deps);
		await w.settle();
		expect((await w.store.getRun(first))?.tracker.done).toBe(true);
		run = await w.store.getRun(second);
		expect(run?.status).toBe("planning");
		expect(await w.store.issueLockHolder("linear", issue.id)).toBe(second);
		expect(w.linear.stateName(issue)).toBe("In Progress");
		const comments = w.comments(issue.id).map((c) => c.split("\n")[0]);
		expect(comments.at(-2)).toMatch(/^Lisa could not resolve this issue/);
		expect(comments.at(-1)).toMatch(/^Lisa is working on this issue/);
		expect((await w.timeline(second)).filter((e) => e.type === "run.waiting")).toHaveLength(1);
	});
});

describe("the stats of a finished run", () => {
	it("count it once in its day, even when finalize crashed right after, and a merged PR once", async () => {
		const { runId } = await working("Counted once");
		const day = (await w.store.getRun(runId))?.createdAt.slice(0, 10) ?? "";
		const [before] = await w.store.dayStats([day]);
		// Counted, then the crash: the run does not record that it was.
		w.failDynamo((r) => r.command === "UpdateItemCommand" && r.json.includes('"counted":true'));
		await w.finishTask(runId, 1, 1, { error: "tests fail" });
		expect(await w.deliver("events", { dropFailed: true })).toEqual({ handled: 1, failed: 1 });
		expect((await w.store.getRun(runId))?.tracker.counted).not.toBe(true);

		w.advance(31_000);
		await sweep(w.deps);
		expect((await w.store.getRun(runId))?.tracker).toMatchObject({ counted: true, done: true });
		const merged = {
			type: "pr.closed",
			runId,
			prUrl: "https://github.com/acme/api/pull/4242",
			merged: true,
			at: w.now().toISOString(),
		} as const;
		await w.deps.queue.send("events", merged);
		await w.deps.queue.send("events", merged);
		await w.settle();
		const [after] = await w.store.dayStats([day]);
		expect((after?.counts.failed ?? 0) - (before?.counts.failed ?? 0)).toBe(1);
		expect((after?.mergedPrs ?? 0) - (before?.mergedPrs ?? 0)).toBe(1);
	});
});
