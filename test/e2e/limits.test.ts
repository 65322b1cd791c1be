import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStackWorld, type StackWorld } from "../support/stack";

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ configExtra: "limits: {max_concurrent_runs: 1}" });
});
afterAll(() => w.stop());

type Event = { type: string; at: string; message: string };
const timeline = async (id: string) =>
	(await w.api<{ events: Event[] }>(`/api/runs/${id}/events`)).body.events;

describe("limits.max_concurrent_runs", () => {
	it("keeps a second run queued until the first finishes, then runs it", async () => {
		const first = await w.startRun("First in line", "lisa-fake: sleep=3");
		await w.waitForRun(first, (r) => r.steps[0]?.status === "running");
		const second = await w.startRun("Second in line");

		const waiting = await w.waitForRun(
			second,
			(r) => r.status === "queued" && r.waitingSince !== undefined,
		);
		expect(waiting.steps).toEqual([]);
		expect((await timeline(second)).find((e) => e.type === "run.waiting")?.message).toBe(
			"waiting for a free slot: 1 of 1 runs are active (limits.max_concurrent_runs)",
		);

		const [a, b] = await Promise.all([w.waitForRun(first), w.waitForRun(second)]);
		expect(a.status).toBe("succeeded");
		expect(b.status).toBe("succeeded");
		// The second run's task started only after the first run had finished.
		const firstDone = (await timeline(first)).find((e) => e.type === "run.succeeded")?.at ?? "";
		const secondLaunched =
			(await timeline(second)).find((e) => e.type === "step.launched")?.at ?? "";
		expect(firstDone).not.toBe("");
		expect(secondLaunched > firstDone).toBe(true);
		expect(await w.stack?.deps.store.runSlotHolders()).toEqual([]);
	});
});
