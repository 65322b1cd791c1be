import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { useEmbeddedStore } from "../../../test/support/aws";
import { foldRuns, type StatsRun } from "../../domain/day-stats";
import { newStep } from "../../domain/run";
import { statsOf } from "../../domain/stats";
import type { DynamoStore } from ".";

let store: DynamoStore;
useEmbeddedStore((s) => {
	store = s;
});

/** A run that succeeded `minutes` after it was created on `day` of March 2026, for `usd`. */
function finished(day: number, minutes: number, usd = 1): StatsRun {
	const created = Date.UTC(2026, 2, day, 10, minutes);
	const later = new Date(created + minutes * 60_000).toISOString();
	return {
		runId: ulid(created),
		status: "succeeded",
		createdAt: new Date(created).toISOString(),
		finishedAt: later,
		steps: [
			{
				...newStep(0, "api"),
				status: "succeeded",
				provider: "claude",
				launchedAt: new Date(created).toISOString(),
				finishedAt: later,
				prUrl: `https://github.com/acme/api/pull/${created}`,
				usage: [
					{
						attempt: 1,
						runs: [],
						total: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
						cost: { modelUsd: usd, knownModelUsd: usd, computeUsd: 0 },
					},
				],
			},
		],
	};
}

describe("the stats' days in DynamoDB", () => {
	it("never counts a redelivered finish or merge twice", async () => {
		const run = finished(1, 5);
		await store.countRun(run);
		await store.countRun(run);
		await Promise.all([store.countRun(run), store.countRun(run)]);
		const pr = run.steps[0]?.prUrl as string;
		await Promise.all([store.countMerge(run, pr), store.countMerge(run, pr)]);
		await store.countMerge(run, pr);
		// A finish that carries the merge already counted adds nothing either.
		await store.countRun({
			...run,
			closedPullRequests: [{ url: pr, merged: true, at: run.createdAt }],
		});
		const [day] = await store.dayStats(["2026-03-01"]);
		expect(day).toMatchObject({ day: "2026-03-01", counts: { succeeded: 1 }, mergedPrs: 1 });
		expect(day?.cost).toEqual({ known: 1_000_000, compute: 0, unknown: 0 });
		// What the day counted stays in the store: the stats' read leaves it out.
		expect(day).not.toHaveProperty("runIds");
	});

	it("counts every one of many finishes on one day at once (a lost version race is read again)", async () => {
		const runs = Array.from({ length: 25 }, (_, i) => finished(2, i + 1, 0.5));
		await Promise.all(runs.map((r) => store.countRun(r)));
		const [day] = await store.dayStats(["2026-03-02"]);
		expect(day?.counts.succeeded).toBe(25);
		expect(statsOf(day ? [day] : [])).toEqual(statsOf(foldRuns(runs)));
	});

	it("reads the days asked for, more than one batch of them, and skips days without runs", async () => {
		const runs = [finished(3, 10), finished(4, 20), finished(4, 30)];
		await store.countRuns(runs);
		const days = Array.from({ length: 150 }, (_, i) =>
			new Date(Date.UTC(2026, 1, 1) + i * 86_400_000).toISOString().slice(0, 10),
		);
		const read = await store.dayStats(days);
		expect(read.map((d) => d.day)).toEqual([
			"2026-03-01",
			"2026-03-02",
			"2026-03-03",
			"2026-03-04",
		]);
		const [, , third, fourth] = read;
		expect(statsOf(third && fourth ? [third, fourth] : [])).toEqual(statsOf(foldRuns(runs)));
		expect(await store.dayStats([])).toEqual([]);
	});
});
