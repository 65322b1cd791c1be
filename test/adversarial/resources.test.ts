import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PurgeQueueCommand } from "@aws-sdk/client-sqs";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Settings } from "../../src/config/settings";
import { startLocalStack } from "../../src/local/stack";
import { sweep } from "../../src/pipeline/sweeper";
import { awsClients } from "../../src/runtime/aws";
import { pipelineWorld } from "../support/pipeline";
import { createStackWorld, type StackWorld } from "../support/stack";
import { createTaskWorld } from "../support/task";

// What a run leaves on the machine, and how Lisa retries what failed for reasons that may pass:
// a step's workspace goes with its attempt, however the attempt ends; logs are bounded; leftovers
// of an earlier start are swept; launches back off; an agent killed outright is retried.

describe("workspaces and logs on the local stack", () => {
	let w: StackWorld;
	beforeAll(async () => {
		w = await createStackWorld({ configExtra: "limits: {max_attempts: 1}" });
	});
	afterAll(() => w.stop());

	const dataDir = () => w.env.LISA_DATA_DIR as string;
	const gone = (runId: string) =>
		expect
			.poll(() => existsSync(path.join(dataDir(), "workspaces", runId)), { timeout: 15_000 })
			.toBe(false);

	it("removes a step's workspace when its attempt succeeds or fails, and keeps its log (0600)", async () => {
		const ok = await w.startRun("Workspace after success");
		const failed = await w.startRun("Workspace after failure", "lisa-fake: exit=3");
		expect((await w.waitForRun(ok)).status).toBe("succeeded");
		expect((await w.waitForRun(failed)).status).toBe("failed");
		await gone(ok);
		await gone(failed);
		const log = path.join(dataDir(), "logs", ok, "step-0-attempt-1.log");
		expect((await stat(log)).mode & 0o777).toBe(0o600);
	});

	it("removes the workspace of a task that was killed before it could clean up", async () => {
		const runId = await w.startRun("Killed task", "lisa-fake: sleep=60");
		const running = await w.waitForRun(
			runId,
			(r) => r.steps[0]?.status === "running" && r.steps[0]?.agentState === "in_progress",
		);
		expect(existsSync(path.join(dataDir(), "workspaces", runId))).toBe(true);
		const pid = Number(running.steps[0]?.taskId?.split(":")[1]);
		process.kill(-pid, "SIGKILL");
		await gone(runId);
	});
});

describe("a new start", () => {
	it("sweeps the workspaces an earlier start left and logs older than two weeks", async () => {
		const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-sweep-"));
		await chmod(dir, 0o711); // agents of their own uids reach their workspaces in here
		const dataDir = path.join(dir, "data");
		const left = path.join(dataDir, "workspaces", ulid(), "step-0-attempt-1", "repo");
		await mkdir(left, { recursive: true });
		await writeFile(path.join(left, "big.bin"), Buffer.alloc(1024 * 1024));
		const oldLog = path.join(dataDir, "logs", ulid());
		const newLog = path.join(dataDir, "logs", ulid());
		for (const d of [oldLog, newLog]) {
			await mkdir(d, { recursive: true });
			await writeFile(path.join(d, "step-0-attempt-1.log"), "{}\n");
		}
		const longAgo = new Date(Date.now() - 15 * 24 * 3600 * 1000);
		await utimes(oldLog, longAgo, longAgo);
		const stack = await startLocalStack({
			workers: false,
			env: { PATH: process.env.PATH, PORT: "0", LISA_DATA_DIR: dataDir, LOG_LEVEL: "silent" },
		});
		try {
			expect(await readdir(path.join(dataDir, "workspaces"))).toEqual([]);
			expect(existsSync(oldLog)).toBe(false);
			expect(existsSync(newLog)).toBe(true);
		} finally {
			await stack.stop();
			await rm(dir, { recursive: true, force: true });
		}
	});
});

/** What a lost message, or a restart of the in-memory queue, does: the events queue empties. */
const purgeEvents = (settings: Settings) =>
	awsClients(settings).sqs.send(new PurgeQueueCommand({ QueueUrl: settings.eventsQueueUrl }));

describe("retries", () => {
	it("back off between launch attempts: no second launch before the wait, doubled after", async () => {
		const w = await pipelineWorld({ limits: "retry_backoff_seconds: 1, max_attempts: 3" });
		try {
			w.ecs.refuseLaunches(2);
			const runId = ulid();
			await w.request(w.issue("Capacity is short"), runId);
			await w.deliver("intake");
			// The first launch failed; the second waits its backoff, pending.
			expect(w.launchesOf(runId)).toEqual([{ step: 0, attempt: 1 }]);
			let step = (await w.store.getRun(runId))?.steps[0];
			expect(step).toMatchObject({ status: "pending", attempt: 2 });
			expect(Date.parse(step?.notBefore ?? "")).toBe(w.now().getTime() + 1000);
			const retry = (await w.timeline(runId)).find((e) => e.type === "step.retry");
			expect(retry?.message).toMatch(/starting attempt 2 in 1 s$/);
			expect((await w.deliver("events")).handled).toBe(0);
			expect(w.launchesOf(runId)).toHaveLength(1);

			// Its message arrives after the wait; that launch fails too, and the next waits twice as long.
			w.advance(1000);
			await expect.poll(async () => (await w.deliver("events")).handled, { timeout: 5000 }).toBe(1);
			expect(w.launchesOf(runId)).toEqual([
				{ step: 0, attempt: 1 },
				{ step: 0, attempt: 2 },
			]);
			step = (await w.store.getRun(runId))?.steps[0];
			expect(step).toMatchObject({ status: "pending", attempt: 3 });
			expect(Date.parse(step?.notBefore ?? "")).toBe(w.now().getTime() + 2000);

			// A launch message before its time (a duplicate, or forged) launches nothing.
			await w.deps.queue.send("events", { type: "step.launch", runId, stepIndex: 0, attempt: 3 });
			expect((await w.deliver("events")).handled).toBe(1);
			expect(w.launchesOf(runId)).toHaveLength(2);

			// A restart empties the in-memory queue, the delayed launch with it: the sweeper sends it
			// again.
			await purgeEvents(w.settings);
			w.advance(2000);
			await sweep(w.deps, { restarted: true });
			await expect.poll(async () => (await w.deliver("events")).handled, { timeout: 5000 }).toBe(1);
			expect(w.launchesOf(runId)).toHaveLength(3);
			expect((await w.store.getRun(runId))?.steps[0]).toMatchObject({
				status: "running",
				attempt: 3,
			});
		} finally {
			await w.stop();
		}
	});

	it("launch a retry whose message was lost once its time is well past (the sweeper)", async () => {
		const w = await pipelineWorld({ limits: "retry_backoff_seconds: 5" });
		try {
			w.ecs.refuseLaunches(1);
			const runId = ulid();
			await w.request(w.issue("Lost launch message"), runId);
			await w.deliver("intake");
			expect((await w.store.getRun(runId))?.steps[0]).toMatchObject({ status: "pending" });
			await purgeEvents(w.settings);
			w.advance(5_000 + 61_000);
			await sweep(w.deps);
			expect(w.launchesOf(runId)).toEqual([
				{ step: 0, attempt: 1 },
				{ step: 0, attempt: 2 },
			]);
		} finally {
			await w.stop();
		}
	});

	it("take an agent killed outright (SIGKILL, as by the out-of-memory killer) as transient", async () => {
		const w = await createTaskWorld();
		try {
			const runId = await w.newRun({ title: "Out of memory", description: "lisa-fake: kill-self" });
			const report = await w.runTask(runId);
			expect(report).toMatchObject({ outcome: "failed", transient: true });
			expect(report?.error).toBe("claude was killed by SIGKILL (out of memory?)");
		} finally {
			await w.stop();
		}
	});
});
