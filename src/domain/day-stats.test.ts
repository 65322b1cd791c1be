import { describe, expect, it } from "vitest";
import { runStats } from "../../test/support/stats";
import {
	addMerge,
	addRun,
	DAY_BYTES,
	emptyDay,
	foldRun,
	foldRuns,
	type StatsRun,
	statsPart,
} from "./day-stats";
import { newStep, planStep, type Step } from "./run";
import type { RunStatus } from "./states";
import { statsOf } from "./stats";
import type { StepAttemptUsage } from "./usage";

const at = (day: number, min: number) => new Date(Date.UTC(2026, 10, day, 9, min)).toISOString();

/** An attempt that cost `model` USD (null: unknown, `known` of it priced) plus `compute`. */
function spent(model: number | null, compute = 0, known = 0): StepAttemptUsage {
	return {
		attempt: 1,
		runs: [],
		total: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0 },
		seconds: 60,
		cost: {
			modelUsd: model,
			knownModelUsd: model ?? known,
			computeUsd: compute,
			...(model === null ? { unknown: ["x: no price"] } : {}),
		},
	};
}

let n = 0;
function run(
	day: number,
	status: RunStatus,
	over: { minutes?: number; steps?: Partial<Step>[]; merged?: string[]; parentRunId?: string } = {},
): StatsRun {
	n++;
	const minutes = over.minutes ?? 10;
	const done = status === "succeeded" || status === "failed" || status === "cancelled";
	return {
		runId: `01RUN${String(n).padStart(21, "0")}`,
		title: `Issue ${n}`,
		status,
		createdAt: at(day, n % 50),
		finishedAt: done
			? new Date(Date.parse(at(day, n % 50)) + minutes * 60_000).toISOString()
			: undefined,
		parentRunId: over.parentRunId,
		steps: (over.steps ?? [{}]).map((s, i) => ({
			...newStep(i, "api"),
			status: status === "succeeded" ? "succeeded" : status === "failed" ? "failed" : "running",
			provider: "claude",
			launchedAt: at(day, n % 50),
			finishedAt: done
				? new Date(Date.parse(at(day, n % 50)) + (minutes - 1) * 60_000).toISOString()
				: undefined,
			prUrl: status === "succeeded" ? `https://github.com/acme/api/pull/${n}` : undefined,
			...s,
		})),
		closedPullRequests: (over.merged ?? []).map((url) => ({ url, merged: true, at: at(day, 59) })),
	};
}

describe("a day's stats", () => {
	it("counts a run once and a merged pull request once, however often they are redelivered", () => {
		const day = emptyDay("2026-11-03");
		const r = run(3, "succeeded", { steps: [{ usage: [spent(2, 0.5)] }] });
		expect(addRun(day, r)).toBe(true);
		const once = structuredClone(day);
		expect(addRun(day, r)).toBe(false);
		expect(addMerge(day, "https://github.com/acme/api/pull/1")).toBe(true);
		expect(addMerge(day, "https://github.com/acme/api/pull/1")).toBe(false);
		expect(
			foldRun(day, {
				...r,
				closedPullRequests: [
					{ url: "https://github.com/acme/api/pull/1", merged: true, at: at(3, 30) },
				],
			}),
		).toBe(false);
		expect({ ...day, mergedPrs: 0, prUrls: [], bytes: once.bytes }).toEqual(once);
		expect(day.mergedPrs).toBe(1);
		expect(statsOf([day]).cost).toMatchObject({ totalUsd: 2.5, modelUsd: 2, computeUsd: 0.5 });
	});

	it("takes percentiles over every day's samples exactly, in any order and any grouping", () => {
		// Durations 1..21 minutes over three days: the nearest-rank median is 11, the p90 19.
		const runs = Array.from({ length: 21 }, (_, i) =>
			run(1 + (i % 3), i % 4 ? "succeeded" : "failed", {
				minutes: 21 - i,
				steps: [{ usage: [spent(0.1 * (i + 1), 0.01)], provider: i % 2 ? "claude" : "codex" }],
				merged: i % 4 ? [`https://github.com/acme/api/pull/m${i}`] : [],
			}),
		);
		const s = runStats(runs);
		expect(s.duration).toEqual({ medianSeconds: 11 * 60, p90Seconds: 19 * 60 });
		expect(Object.keys(s.byDay)).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
		// One ledger a run, or the runs folded backwards: the same answer, to the cent and the second.
		const single = runs.map((r) => {
			const day = emptyDay(r.createdAt.slice(0, 10));
			foldRun(day, r);
			return statsPart(day);
		});
		expect(statsOf(single)).toEqual(s);
		expect(statsOf(foldRuns([...runs].reverse()))).toEqual(s);
		expect(s.mergedPrs).toBe(15);
		expect(s.costPerMergedPr).toBeCloseTo((s.cost.totalUsd ?? 0) / 15, 9);
	});

	it("sums cost per repo, provider and day; the planning step's cost is its provider's, not a repo's", () => {
		const multi = run(5, "succeeded", {
			steps: [
				{ ...planStep(0), usage: [spent(1)], provider: "claude", prUrl: undefined },
				{ repo: "api", usage: [spent(2)], provider: "codex" },
				{ index: 2, repo: "web", usage: [spent(3)], provider: "claude" },
			],
			merged: ["https://github.com/acme/api/pull/x", "https://github.com/acme/web/pull/y"],
		});
		const failed = run(5, "failed", { steps: [{ usage: [spent(4)] }] });
		const cancelled = run(6, "cancelled", {
			steps: [{ usage: [spent(0.5)], status: "cancelled" }],
		});
		const s = runStats([multi, failed, cancelled]);
		expect(s.cost).toEqual({
			totalUsd: 10.5,
			knownUsd: 10.5,
			modelUsd: 10.5,
			computeUsd: 0,
			unknownRuns: 0,
		});
		expect(s.byRepo.api?.cost).toEqual({ totalUsd: 6.5, knownUsd: 6.5 }); // 2 + 4 + 0.5
		expect(s.byRepo.web?.cost).toEqual({ totalUsd: 3, knownUsd: 3 });
		expect(s.byProvider.claude?.cost).toEqual({ totalUsd: 8.5, knownUsd: 8.5 });
		expect(s.byProvider.codex?.cost).toEqual({ totalUsd: 2, knownUsd: 2 });
		expect(s.costPerSucceededRun).toBe(6);
		expect(s.costPerMergedPr).toBe(10.5 / 2);
		expect(s.failedSpendShare).toBeCloseTo(4 / 10.5, 12);
		expect(s.byDay).toEqual({
			"2026-11-05": {
				runs: 2,
				succeeded: 1,
				failed: 1,
				cancelled: 0,
				successRate: 0.5,
				// Each of its steps opened its pull request 9 minutes in.
				timeToPr: { medianSeconds: 540, p90Seconds: 540 },
				cost: { totalUsd: 10, knownUsd: 10 },
			},
			"2026-11-06": {
				runs: 1,
				succeeded: 0,
				failed: 0,
				cancelled: 1,
				successRate: null,
				timeToPr: { medianSeconds: null, p90Seconds: null },
				cost: { totalUsd: 0.5, knownUsd: 0.5 },
			},
		});
		expect(s.mostExpensive.map((r) => [r.runId, r.totalUsd])).toEqual([
			[multi.runId, 6],
			[failed.runId, 4],
			[cancelled.runId, 0.5],
		]);
	});

	it("keeps an unknown cost null, never 0, and says how much is known", () => {
		const priced = run(7, "succeeded", { steps: [{ usage: [spent(1)] }] });
		const unpriced = run(7, "failed", { steps: [{ usage: [spent(null, 0.25, 0.5)] }] });
		const noUsage = run(7, "succeeded", { steps: [{}] });
		const s = runStats([priced, unpriced, noUsage]);
		expect(s.cost).toEqual({
			totalUsd: null,
			knownUsd: 1.75,
			modelUsd: null,
			computeUsd: 0.25,
			unknownRuns: 1,
		});
		expect(s.costPerSucceededRun).toBe(0.5); // the succeeded runs' cost is known
		expect(s.costPerMergedPr).toBeNull();
		expect(s.failedSpendShare).toBeNull();
		expect(s.byRepo.api?.cost).toEqual({ totalUsd: null, knownUsd: 1.75 });
		expect(s.byDay["2026-11-07"]?.cost.totalUsd).toBeNull();
		expect(s.mostExpensive.find((r) => r.runId === unpriced.runId)).toMatchObject({
			totalUsd: null,
			knownUsd: 0.75,
		});
		expect(runStats([]).cost.totalUsd).toBe(0);
		expect(runStats([]).costPerSucceededRun).toBeNull();
	});

	it("keeps the ten costliest runs of every day, and of the window", () => {
		const runs = Array.from({ length: 25 }, (_, i) =>
			run(8 + (i % 2), "succeeded", { steps: [{ usage: [spent(i)] }] }),
		);
		const days = foldRuns(runs);
		for (const d of days) expect(d.costly).toHaveLength(10);
		expect(statsOf(days).mostExpensive.map((r) => r.knownUsd)).toEqual([
			24, 23, 22, 21, 20, 19, 18, 17, 16, 15,
		]);
	});

	it("adds the active runs as they are, and a follow-up round measures no time to PR", () => {
		const finished = run(10, "succeeded", { minutes: 4 });
		const round = run(10, "succeeded", { minutes: 2, parentRunId: finished.runId });
		const active = run(10, "running", { steps: [{ usage: [spent(3)], finishedAt: undefined }] });
		const s = statsOf(foldRuns([finished, round, active]), [active]);
		expect(s.counts).toMatchObject({ succeeded: 2, running: 1 });
		expect(s.cost.totalUsd).toBe(3);
		expect(s.timeToPr.medianSeconds).toBe(3 * 60);
		expect(s).toEqual(runStats([finished, round, active]));
	});

	it("keeps a repo named like an object's own property apart", () => {
		const odd = run(12, "succeeded", {
			steps: [{ repo: "__proto__" }, { index: 1, repo: "constructor" }],
		});
		const [day] = foldRuns([odd]);
		const s = statsOf(day ? [JSON.parse(JSON.stringify(statsPart(day)))] : []);
		expect(Object.keys(s.byRepo)).toEqual(["__proto__", "constructor"]);
		expect(Object.entries(s.byRepo).map(([k, g]) => [k, g.succeeded])).toEqual([
			["__proto__", 1],
			["constructor", 1],
		]);
	});

	it("stops counting a full day, and says so", () => {
		const day = emptyDay("2026-11-11");
		let counted = 0;
		for (let i = 0; i < 5000 && !day.full; i++) if (addRun(day, run(11, "succeeded"))) counted++;
		expect(day.full).toBe(true);
		expect(day.bytes).toBeLessThanOrEqual(DAY_BYTES);
		expect(day.runIds.length).toBe(counted - 1); // the last one changed only `full`
		expect(JSON.stringify(day).length).toBeLessThan(400_000);
		expect(statsOf([day]).full).toBe(true);
	});
});
