import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { useEmbeddedStore } from "../../../test/support/aws";
import { newRun, newStep, type Run, type Step } from "../../domain/run";
import { InvalidCursor, VersionConflict } from "..";
import type { DynamoStore } from ".";

let store: DynamoStore;
useEmbeddedStore((s) => {
	store = s;
});

let n = 0;
const at = (s: number) => new Date(Date.UTC(2026, 10, 21, 12, 0, s)).toISOString();
function makeRun(over: Partial<Run> = {}): Run {
	n++;
	return {
		...newRun({
			runId: ulid(Date.parse(at(n))),
			source: "linear",
			issueId: `issue-${n}`,
			trigger: "webhook",
			now: at(n),
		}),
		...over,
	} as Run;
}

describe("DynamoStore against dynalite", () => {
	it("creates a run once (a redelivered request finds it)", async () => {
		const run = makeRun();
		expect(await store.createRun(run)).toBe(true);
		expect(await store.createRun(run)).toBe(false);
		expect(await store.getRun(run.runId)).toMatchObject({
			runId: run.runId,
			status: "queued",
			version: 0,
			steps: [],
		});
	});

	it("applies version-checked patches and rejects stale writers", async () => {
		const run = makeRun();
		await store.createRun(run);
		const started = await store.updateRun(
			run,
			{ set: { status: "running", title: "T" }, appendSteps: [newStep(0, "api")] },
			at(50),
		);
		expect(started).toMatchObject({ version: 1, status: "running", title: "T", updatedAt: at(50) });
		expect(started.steps).toHaveLength(1);
		await expect(
			store.updateRun(run, { set: { status: "failed" } }, at(51)),
		).rejects.toBeInstanceOf(VersionConflict);
		const launched = await store.updateRun(
			started,
			{ steps: { 0: { status: "launching", taskId: "t1" } } },
			at(52),
		);
		expect(launched.steps[0]).toMatchObject({ status: "launching", taskId: "t1", repo: "api" });
		const cleared = await store.updateRun(
			launched,
			{ steps: { 0: { taskId: undefined } } },
			at(53),
		);
		expect(cleared.steps[0]?.taskId).toBeUndefined();
		await expect(
			store.updateRun(
				cleared,
				{ steps: { 0: { status: "running" } }, appendSteps: [newStep(1, "x")] },
				at(54),
			),
		).rejects.toThrow(/separate/);
	});

	it("replaces the whole step list in one version-checked update (a plan becoming steps)", async () => {
		const run = makeRun();
		await store.createRun(run);
		const planning = await store.updateRun(
			run,
			{ set: { status: "planning" }, appendSteps: [{ ...newStep(0, "*"), kind: "plan" }] },
			at(55),
		);
		const plan = { steps: [{ repo: "api", scope: "add the endpoint", order: 1 }] };
		const steps = [
			{ ...(planning.steps[0] as Step), status: "succeeded" as const, finishedAt: at(56) },
			{ ...newStep(1, "api", "add the endpoint"), order: 1, status: "launching" as const },
		];
		const running = await store.updateRun(
			planning,
			{ set: { status: "running", plan }, replaceSteps: steps },
			at(56),
		);
		expect(running).toMatchObject({ status: "running", plan, version: planning.version + 1 });
		expect(running.steps).toEqual([
			expect.objectContaining({ index: 0, kind: "plan", status: "succeeded" }),
			expect.objectContaining({ index: 1, repo: "api", order: 1, status: "launching" }),
		]);
		// A writer that read the run before the plan was applied loses.
		await expect(store.updateRun(planning, { replaceSteps: [] }, at(57))).rejects.toBeInstanceOf(
			VersionConflict,
		);
		await expect(
			store.updateRun(running, { replaceSteps: steps, appendSteps: [newStep(2, "x")] }, at(58)),
		).rejects.toThrow(/whole list/);
	});

	it("lets the task write its own step fields only while its attempt is launching or running", async () => {
		const run = makeRun();
		await store.createRun(run);
		const r1 = await store.updateRun(
			run,
			{ set: { status: "running" }, appendSteps: [{ ...newStep(0, "api"), status: "launching" }] },
			at(60),
		);
		// The task may write before the launcher recorded it as running.
		expect(await store.updateStepFields(run.runId, 0, 1, { agentState: "just_started" })).toBe(
			true,
		);
		const r2 = await store.updateRun(r1, { steps: { 0: { status: "running" } } }, at(61));
		expect(
			await store.updateStepFields(run.runId, 0, 1, {
				heartbeatAt: at(61),
				agentState: "in_progress",
			}),
		).toBe(true);
		expect(await store.updateStepFields(run.runId, 0, 2, { agentState: "completed" })).toBe(false);
		const after = await store.getRun(run.runId);
		expect(after?.steps[0]).toMatchObject({ heartbeatAt: at(61), agentState: "in_progress" });
		expect(after?.version).toBe(r2.version); // the task never bumps the version

		// Cancelled (or finished) on the same attempt: the task's writes are refused, so it stops.
		await store.updateRun(r2, { steps: { 0: { status: "cancelled" } } }, at(62));
		expect(await store.updateStepFields(run.runId, 0, 1, { heartbeatAt: at(63) })).toBe(false);
		expect(
			await store.updateStepFields(run.runId, 0, 1, {
				report: { attempt: 1, outcome: "succeeded", at: at(63) },
			}),
		).toBe(false);
		expect((await store.getRun(run.runId))?.steps[0]).toMatchObject({
			status: "cancelled",
			heartbeatAt: at(61),
		});
		expect((await store.getRun(run.runId))?.steps[0]?.report).toBeUndefined();
	});

	it("lists runs newest first with a working cursor, and filters by status and source", async () => {
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) {
			const run = makeRun({ source: i === 4 ? "trello" : "linear" });
			await store.createRun(run);
			ids.push(run.runId);
		}
		const first = await store.listRuns({ limit: 2 });
		expect(first.items.map((r) => r.runId)).toEqual([ids[4], ids[3]]);
		expect(first.nextCursor).toBeDefined();
		const second = await store.listRuns({ limit: 2, cursor: first.nextCursor });
		expect(second.items.map((r) => r.runId)).toEqual([ids[2], ids[1]]);
		const trello = await store.listRuns({ limit: 10, source: "trello" });
		expect(trello.items.map((r) => r.runId)).toEqual([ids[4]]);
		const queued = await store.listRuns({ status: "queued", limit: 100 });
		expect(queued.items.length).toBeGreaterThanOrEqual(5);
		expect(queued.items.every((r) => r.status === "queued")).toBe(true);
		await expect(store.listRuns({ limit: 2, cursor: "not-a-cursor" })).rejects.toBeInstanceOf(
			InvalidCursor,
		);
		// Only a cursor this listing made: not the feed's cursor for the status index, not one with
		// a key added or changed, not another run's timeline position.
		const forged = (k: Record<string, unknown>) =>
			Buffer.from(JSON.stringify(k)).toString("base64url");
		const position = JSON.parse(Buffer.from(first.nextCursor ?? "", "base64url").toString());
		for (const cursor of [
			forged({ ...position, extra: "x" }),
			forged({ ...position, gsi3sk: ids[0] }),
			forged({ ...position, pk: "GUARD#x" }),
			forged({ pk: position.pk, sk: "RUN" }),
		])
			await expect(store.listRuns({ limit: 2, cursor })).rejects.toBeInstanceOf(InvalidCursor);
		await expect(
			store.listRuns({ status: "queued", limit: 2, cursor: first.nextCursor }),
		).rejects.toBeInstanceOf(InvalidCursor);
	});

	it("finds runs by status in an update-time window and by issue", async () => {
		const run = makeRun({ issueId: "shared-issue" });
		await store.createRun(run);
		const moved = await store.updateRun(run, { set: { status: "running" } }, at(100));
		const inWindow = await store.runsByStatus("running", { after: at(99), before: at(101) });
		expect(inWindow.map((r) => r.runId)).toContain(moved.runId);
		expect(
			(await store.runsByStatus("running", { before: at(99) })).map((r) => r.runId),
		).not.toContain(moved.runId);
		expect(
			(await store.runsByStatus("queued", { before: at(200) })).map((r) => r.runId),
		).not.toContain(moved.runId);
		const other = makeRun({ issueId: "shared-issue" });
		await store.createRun(other);
		expect((await store.runsOfIssue("linear", "shared-issue")).map((r) => r.runId)).toEqual([
			other.runId,
			run.runId,
		]);
	});

	it("holds one active run per issue", async () => {
		expect(await store.acquireIssueLock("linear", "lock-1", "A")).toEqual({ acquired: true });
		expect(await store.acquireIssueLock("linear", "lock-1", "A")).toEqual({ acquired: true });
		expect(await store.acquireIssueLock("linear", "lock-1", "B")).toEqual({
			acquired: false,
			holder: "A",
		});
		expect(await store.acquireIssueLock("linear", "lock-1", "B", "Z")).toEqual({
			acquired: false,
			holder: "A",
		});
		expect(await store.acquireIssueLock("linear", "lock-1", "B", "A")).toEqual({ acquired: true });
		await store.releaseIssueLock("linear", "lock-1", "A"); // not the holder: no effect
		expect(await store.acquireIssueLock("linear", "lock-1", "C")).toEqual({
			acquired: false,
			holder: "B",
		});
		await store.releaseIssueLock("linear", "lock-1", "B");
		expect(await store.acquireIssueLock("linear", "lock-1", "C")).toEqual({ acquired: true });
	});

	it("records a delivery once, until its record expires or is given back", async () => {
		const opts = { nowMs: Date.UTC(2026, 10, 21), ttlSeconds: 60 };
		expect(await store.claimDelivery("linear", "k1", "R-a", opts)).toBe(true);
		expect(await store.claimDelivery("linear", "k1", "R-b", opts)).toBe(false);
		// The claim says which run id its message carries, and since when.
		expect(await store.deliveryClaim("linear", "k1", opts.nowMs)).toEqual({
			runId: "R-a",
			claimedAt: opts.nowMs,
		});
		// Another source's delivery with the same key is another delivery.
		expect(await store.claimDelivery("github", "k1", "R-g", opts)).toBe(true);
		// Expired (TTL deletion is lazy): absent to a read, claimable again.
		const later = { ...opts, nowMs: opts.nowMs + 61_000 };
		expect(await store.deliveryClaim("linear", "k1", later.nowMs)).toBeUndefined();
		expect(await store.claimDelivery("linear", "k1", "R-c", later)).toBe(true);
		// Only its own claim can be given back.
		await store.releaseDelivery("linear", "k1", "R-a");
		expect((await store.deliveryClaim("linear", "k1", later.nowMs))?.runId).toBe("R-c");
		await store.releaseDelivery("linear", "k1", "R-c");
		expect(await store.deliveryClaim("linear", "k1", later.nowMs)).toBeUndefined();
		expect(await store.claimDelivery("linear", "k1", "R-d", later)).toBe(true);
	});

	it("hands an attempt's minted token to one taker, once, and never after it expired", async () => {
		const attempt = { runId: "R-tok", stepIndex: 1, attempt: 2, nonce: "n0nce" };
		const now = Date.UTC(2026, 10, 28, 12);
		const inAnHour = new Date(now + 3_600_000).toISOString();
		await store.putStepToken(attempt, "ghs_first", inAnHour);
		await store.putStepToken(attempt, "ghs_minted", inAnHour);
		// Another attempt of the step, another step, or a task without the nonce has nothing to take.
		expect(await store.takeStepToken({ ...attempt, attempt: 1 }, now)).toBeUndefined();
		expect(await store.takeStepToken({ ...attempt, stepIndex: 0 }, now)).toBeUndefined();
		expect(await store.takeStepToken({ ...attempt, nonce: "guess" }, now)).toBeUndefined();
		const takers = await Promise.all([1, 2, 3].map(() => store.takeStepToken(attempt, now)));
		expect(takers.filter(Boolean)).toEqual(["ghs_minted"]);
		await store.putStepToken(attempt, "ghs_late", inAnHour);
		expect(await store.takeStepToken(attempt, now + 3_600_000)).toBeUndefined();
		expect(await store.takeStepToken(attempt, now)).toBeUndefined();
	});

	it("records a delivery exactly once under concurrency", async () => {
		const opts = { nowMs: Date.now(), ttlSeconds: 60 };
		const results = await Promise.all(
			Array.from({ length: 20 }, (_, i) => store.claimDelivery("linear", "race", `R${i}`, opts)),
		);
		expect(results.filter(Boolean)).toHaveLength(1);
		const winner = `R${results.indexOf(true)}`;
		expect((await store.deliveryClaim("linear", "race", opts.nowMs))?.runId).toBe(winner);
	});

	it("keeps an append-only timeline in order, paged", async () => {
		const run = makeRun();
		await store.createRun(run);
		for (let i = 0; i < 5; i++)
			await store.appendEvent(run.runId, { type: "agent.output", message: `m${i}` });
		const page1 = await store.listEvents(run.runId, 3);
		expect(page1.items.map((e) => e.message)).toEqual(["m0", "m1", "m2"]);
		const page2 = await store.listEvents(run.runId, 3, { cursor: page1.nextCursor });
		expect(page2.items.map((e) => e.message)).toEqual(["m3", "m4"]);
		expect(page2.nextCursor).toBeUndefined();
		expect((await store.getRun(run.runId))?.runId).toBe(run.runId); // events never shadow the run item
		const resumed = await store.listEvents(run.runId, 10, { after: page1.items[1]?.id });
		expect(resumed.items.map((e) => e.message)).toEqual(["m2", "m3", "m4"]);
	});

	it("filters listings by repo, issue and creation time through the indexes, never a Scan", async () => {
		const scans: string[] = [];
		const stop = store.observe((command) => {
			if (command === "ScanCommand") scans.push(command);
		});
		const day = (d: number, h = 0) => new Date(Date.UTC(2026, 9, d, h)).toISOString();
		const made = async (d: number, repos: string[], over: Partial<Run> = {}) => {
			const run = makeRun({
				runId: ulid(Date.parse(day(d))),
				createdAt: day(d),
				updatedAt: day(d),
				...over,
			});
			await store.createRun(run);
			if (!repos.length) return run;
			return store.updateRun(run, { appendSteps: repos.map((r, i) => newStep(i, r)) }, day(d, 1));
		};
		const a = await made(1, ["filter-api"], { issueKey: "FLT-1" });
		const b = await made(2, ["filter-api", "filter-web"], { issueKey: "FLT-2" });
		const c = await made(3, ["filter-web"], { issueKey: "FLT-1" });
		const ids = (p: { items: Run[] }) => p.items.map((r) => r.runId);

		expect(ids(await store.listRuns({ repo: "filter-api", limit: 10 }))).toEqual([
			b.runId,
			a.runId,
		]);
		expect(ids(await store.listRuns({ repo: "filter-web", limit: 10 }))).toEqual([
			c.runId,
			b.runId,
		]);
		expect(ids(await store.listRuns({ issue: "FLT-1", limit: 10 }))).toEqual([c.runId, a.runId]);
		expect(ids(await store.listRuns({ issue: a.issueId, limit: 10 }))).toEqual([a.runId]);
		expect(
			ids(await store.listRuns({ repo: "filter-web", since: day(2), until: day(3), limit: 10 })),
		).toEqual([b.runId]);
		// The status index narrows by update time (never before creation), then filters.
		expect(
			ids(await store.listRuns({ status: "queued", repo: "filter-api", since: day(2), limit: 10 })),
		).toEqual([b.runId]);
		// Paging through a filtered listing loses and repeats nothing.
		const first = await store.listRuns({ repo: "filter-web", limit: 1 });
		const second = await store.listRuns({ repo: "filter-web", limit: 1, cursor: first.nextCursor });
		expect([...ids(first), ...ids(second)]).toEqual([c.runId, b.runId]);

		const window = await store.runsCreatedBetween(day(1), day(3), 10, ["runId", "status"]);
		expect(window.runs.map((r) => r.runId)).toEqual([b.runId, a.runId]);
		// Only the fields asked for are read.
		expect(window.runs[0]).toEqual({ runId: b.runId, status: "queued" });
		expect(window.truncated).toBe(false);
		const capped = await store.runsCreatedBetween(day(1), day(4), 2, ["runId"]);
		expect(capped.runs.map((r) => r.runId)).toEqual([c.runId, b.runId]);
		expect(capped.truncated).toBe(true);
		stop();
		expect(scans).toEqual([]);
	});
});

describe("run slots (limits.max_concurrent_runs)", () => {
	it("hands out at most max slots, idempotently, and takes them back", async () => {
		expect(await store.acquireRunSlot("S1", 2)).toEqual({ acquired: true });
		expect(await store.acquireRunSlot("S1", 2)).toEqual({ acquired: true });
		expect(await store.acquireRunSlot("S2", 2)).toEqual({ acquired: true });
		expect(await store.acquireRunSlot("S3", 2)).toEqual({ acquired: false, active: 2 });
		expect((await store.runSlotHolders()).sort()).toEqual(["S1", "S2"]);
		await store.releaseRunSlot("S1");
		await store.releaseRunSlot("S1");
		expect(await store.acquireRunSlot("S3", 2)).toEqual({ acquired: true });
		await store.releaseRunSlot("S2");
		await store.releaseRunSlot("S3");
		expect(await store.runSlotHolders()).toEqual([]);
	});

	it("never hands out more than max under concurrency", async () => {
		const results = await Promise.all(
			Array.from({ length: 12 }, (_, i) => store.acquireRunSlot(`C${i}`, 3)),
		);
		expect(results.filter((r) => r.acquired)).toHaveLength(3);
		for (const holder of await store.runSlotHolders()) await store.releaseRunSlot(holder);
	});
});
