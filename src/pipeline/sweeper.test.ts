import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TASK_ARN_PREFIX } from "../../test/support/aws";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import { sweep } from "./sweeper";

// The sweeper's recoveries, with the interleavings that crashes, at-least-once delivery and an
// eventually consistent status index produce, forced through DynamoDB, ECS and Linear hooks.

let w: PipelineWorld;
beforeAll(async () => {
	w = await pipelineWorld();
});
afterAll(() => w.stop());
// Every forced interleaving happened.
afterEach(() => expect(w.unused()).toEqual([]));

const PR = (n: number) => `https://github.com/acme/api/pull/${n}`;
/** The status index query for running runs (what the sweeper lists them with). */
const runningIndex = (r: { command: string; json: string }) =>
	r.command === "QueryCommand" && r.json.includes("byStatus") && r.json.includes("STATUS#running");

/** An issue and a run for it through intake, up to its first task running. */
async function started(title: string) {
	const issue = w.issue(title);
	const runId = w.deps.newRunId();
	await w.request(issue, runId);
	await w.settle();
	const run = await w.store.getRun(runId);
	expect(run?.steps[0]).toMatchObject({ status: "running", attempt: 1 });
	return { issue, runId, taskId: run?.steps[0]?.taskId ?? "" };
}

async function step0(runId: string) {
	return (await w.store.getRun(runId))?.steps[0];
}

/** The task reports success and the pipeline applies it. */
async function succeed(runId: string, attempt: number, pr: string) {
	await w.finishTask(runId, 0, attempt, { prUrl: pr, branch: "feat/x" });
	await w.settle();
	const run = await w.store.getRun(runId);
	expect(run?.status).toBe("succeeded");
	return run;
}

describe("a run whose intake stopped before launching (issue 1)", () => {
	it("is re-driven after a grace period and launches once, instead of holding its issue and slot forever", async () => {
		const issue = w.issue("Tracker hiccup at start");
		const runId = w.deps.newRunId();
		// Moving the issue to In Progress fails until the message is given up on (the DLQ).
		w.gate.failNext(/mutation updateIssue/);
		await w.request(issue, runId);
		expect(await w.deliver("intake", { dropFailed: true })).toEqual({ handled: 1, failed: 1 });
		let run = await w.store.getRun(runId);
		expect(run?.status).toBe("running");
		expect(run?.steps[0]?.status).toBe("pending");
		expect(await w.store.issueLockHolder("linear", issue.id)).toBe(runId);

		// Within the grace period the intake may still be at work: nothing is sent.
		await sweep(w.deps);
		expect(await w.deliver("intake")).toEqual({ handled: 0, failed: 0 });

		w.advance(61_000);
		const report = await sweep(w.deps);
		expect(report.redriven).toBe(1);
		await w.settle();
		run = await w.store.getRun(runId);
		expect(run?.steps[0]).toMatchObject({ status: "running", attempt: 1 });
		expect(w.launchesOf(runId)).toEqual([{ step: 0, attempt: 1 }]);
		expect(w.linear.stateName(issue)).toBe("In Progress");
		expect(w.comments(issue.id)).toHaveLength(1);
		const events = (await w.timeline(runId)).map((e) => e.type);
		expect(events).toContain("run.redriven");

		await succeed(runId, 1, PR(1));
		expect(await w.store.runSlotHolders()).not.toContain(runId);
		expect(await w.store.issueLockHolder("linear", issue.id)).toBeUndefined();
	});
});

describe("the sweeper decides on the run as it is, not on the index's snapshot (issue 2)", () => {
	it("keeps a report stored (and the task gone) after the index was read", async () => {
		const { runId, taskId } = await started("Finishes as the sweeper looks");
		w.advance(10_000);
		await w.heartbeat(runId, 0, 1);
		// The index answers with the run as it was; meanwhile the task stores its report and exits.
		w.afterDynamo(runningIndex, async () => {
			await w.finishTask(runId, 0, 1, { prUrl: PR(2), branch: "feat/x" });
			w.ecs.tasks.set(taskId, { lastStatus: "STOPPED", stopCode: "EssentialContainerExited" });
		});
		await sweep(w.deps);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 1 });

		const run = await succeed(runId, 1, PR(2));
		expect(run?.steps[0]).toMatchObject({ attempt: 1, prUrl: PR(2) });
		expect(w.launchesOf(runId)).toHaveLength(1);
	});

	it("uses the report stored while it asked ECS about the task, over the task's loss", async () => {
		const { runId, taskId } = await started("Finishes while ECS is asked");
		w.advance(10_000);
		await w.heartbeat(runId, 0, 1);
		w.ecs.hooks.describe = async () => {
			await w.finishTask(runId, 0, 1, { prUrl: PR(3), branch: "feat/x" }, { send: false });
			w.ecs.tasks.set(taskId, { lastStatus: "STOPPED", stopCode: "EssentialContainerExited" });
		};
		const report = await sweep(w.deps);
		expect(report.lost).toBe(1);
		const run = await w.store.getRun(runId);
		expect(run?.status).toBe("succeeded");
		expect(run?.steps[0]).toMatchObject({ status: "succeeded", attempt: 1, prUrl: PR(3) });
		expect(w.launchesOf(runId)).toHaveLength(1);
		const types = (await w.timeline(runId)).map((e) => e.type);
		expect(types).toEqual(expect.arrayContaining(["step.lost", "step.reported", "run.succeeded"]));
	});

	it("does not stop a task that heartbeat after the index (or its own read) was taken", async () => {
		const { runId, taskId } = await started("Healthy but read late");
		w.advance(10_000);
		await w.heartbeat(runId, 0, 1);
		w.advance(3 * 60_000); // the last heartbeat the index holds is 3 minutes old
		w.afterDynamo(runningIndex, async () => {
			await w.heartbeat(runId, 0, 1);
		});
		await sweep(w.deps);
		expect(w.ecs.stopped).not.toContain(taskId);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 1 });

		// The same with the heartbeat landing while ECS is asked whether the task lives.
		w.advance(3 * 60_000);
		w.ecs.hooks.describe = async () => {
			await w.heartbeat(runId, 0, 1);
		};
		await sweep(w.deps);
		expect(w.ecs.stopped).not.toContain(taskId);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 1 });
		expect(w.launchesOf(runId)).toHaveLength(1);

		// A task that is really silent is still stopped and retried.
		w.advance(3 * 60_000);
		const report = await sweep(w.deps);
		expect(report.lost).toBe(1);
		expect(w.ecs.stopped).toContain(taskId);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 2 });
		await succeed(runId, 2, PR(4));
	});

	it("lets a success stored as the step times out stand", async () => {
		const { runId, taskId } = await started("Done at the last minute");
		w.advance(61 * 60_000);
		await w.heartbeat(runId, 0, 1);
		// The task stores its report as the sweeper stops it for the timeout.
		w.ecs.hooks.stop = async () => {
			await w.finishTask(runId, 0, 1, { prUrl: PR(5), branch: "feat/x" });
		};
		const report = await sweep(w.deps);
		expect(report.timedOut).toBe(1);
		expect(w.ecs.stopped).toContain(taskId);
		const run = await w.store.getRun(runId);
		expect(run?.status).toBe("succeeded");
		expect(run?.steps[0]).toMatchObject({ status: "succeeded", prUrl: PR(5) });
		await w.settle(); // the task's own message changes nothing
		expect((await w.store.getRun(runId))?.version).toBe(run?.version);
	});
});

describe("a launched task whose id was not recorded (issue 3)", () => {
	/** Intake launches, then the write recording the task id fails (a timeout, a crash). */
	async function launchedUnrecorded(title: string) {
		const issue = w.issue(title);
		const runId = w.deps.newRunId();
		w.failDynamo((r) => r.command === "UpdateItemCommand" && r.json.includes(TASK_ARN_PREFIX));
		await w.request(issue, runId);
		expect(await w.deliver("intake", { dropFailed: true })).toEqual({ handled: 1, failed: 1 });
		const step = await step0(runId);
		expect(step).toMatchObject({ status: "launching", attempt: 1 });
		expect(step?.taskId).toBeUndefined();
		expect(w.launchesOf(runId)).toHaveLength(1);
		return runId;
	}

	it("is alive while it heartbeats: recorded as running, never launched a second time", async () => {
		const runId = await launchedUnrecorded("Recording the task failed");
		for (let i = 0; i < 8; i++) {
			w.advance(60_000);
			await w.heartbeat(runId, 0, 1);
			await sweep(w.deps);
		}
		expect(w.launchesOf(runId)).toHaveLength(1);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 1 });
		expect((await w.timeline(runId)).filter((e) => e.type === "step.running")).toHaveLength(1);
		await succeed(runId, 1, PR(6));
	});

	it("is lost once it falls silent, and the step goes on with the next attempt", async () => {
		const runId = await launchedUnrecorded("Recorded task dies");
		w.advance(30_000);
		await w.heartbeat(runId, 0, 1);
		await sweep(w.deps);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 1 });
		w.advance(3 * 60_000);
		const report = await sweep(w.deps);
		expect(report.lost).toBe(1);
		expect(await step0(runId)).toMatchObject({ status: "running", attempt: 2 });
		expect(w.launchesOf(runId)).toEqual([
			{ step: 0, attempt: 1 },
			{ step: 0, attempt: 2 },
		]);
		// The first attempt's task is refused from now on (and aborts on that).
		expect(await w.heartbeat(runId, 0, 1)).toBe(false);
		await succeed(runId, 2, PR(7));
	});
});
