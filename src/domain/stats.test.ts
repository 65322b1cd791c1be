import { describe, expect, it } from "vitest";
import { runStats } from "../../test/support/stats";
import { newRun, newStep, planStep, type Run, type Step } from "./run";
import { percentileOf } from "./stats";

const t = (min: number) => new Date(Date.UTC(2026, 10, 1, 9, min)).toISOString();

function run(id: string, status: Run["status"], steps: Partial<Step>[], end?: number): Run {
	return {
		...newRun({ runId: id, source: "linear", issueId: id, trigger: "webhook", now: t(0) }),
		status,
		finishedAt: end === undefined ? undefined : t(end),
		steps: steps.map((s, i) => ({ ...newStep(i, "api"), ...s })),
	};
}

describe("percentiles (nearest rank)", () => {
	it.each([
		[[], 0.5, null],
		[[7], 0.9, 7],
		[[1, 2, 3, 4], 0.5, 2],
		[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9, 9],
		[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0.9, 10],
	])("%j at %d is %j", (sorted, p, want) => {
		expect(percentileOf([sorted], p)).toBe(want);
	});

	it("of many ascending lists are those of their union, sorted", () => {
		let seed = 7;
		const random = () => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			return seed / 2 ** 31;
		};
		for (let round = 0; round < 50; round++) {
			const lists = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
				Array.from({ length: Math.floor(random() * 40) }, () => Math.floor(random() * 5000)).sort(
					(a, b) => a - b,
				),
			);
			const all = lists.flat().sort((a, b) => a - b);
			for (const p of [0.5, 0.9, 1])
				expect(percentileOf(lists, p)).toBe(
					all.length ? all[Math.max(0, Math.ceil(p * all.length) - 1)] : null,
				);
		}
	});
});

describe("runStats", () => {
	it("has nulls, not zeros, where there is nothing to measure", () => {
		const s = runStats([]);
		expect(s).toMatchObject({ total: 0, successRate: null, agentSeconds: 0, byRepo: {} });
		expect(s.timeToPr).toEqual({ medianSeconds: null, p90Seconds: null });
	});

	it("measures no time to PR for a follow-up round, which works on a PR it did not open", () => {
		const round = {
			...run(
				"R",
				"succeeded",
				[{ status: "succeeded", prUrl: "https://x/pull/1", finishedAt: t(5) }],
				5,
			),
			parentRunId: "P",
		};
		const s = runStats([round]);
		expect(s.counts.succeeded).toBe(1);
		expect(s.timeToPr).toEqual({ medianSeconds: null, p90Seconds: null });
		expect(s.byRepo.api?.timeToPr).toEqual({ medianSeconds: null, p90Seconds: null });
	});

	it("counts by status and measures time to PR, per repo and per provider", () => {
		const runs = [
			// Two repos: the first PR after 10 minutes, the second after 20.
			run(
				"A",
				"succeeded",
				[
					{
						...planStep(0),
						status: "succeeded",
						provider: "claude",
						launchedAt: t(0),
						finishedAt: t(2),
					},
					{
						repo: "api",
						status: "succeeded",
						provider: "claude",
						launchedAt: t(2),
						finishedAt: t(10),
						prUrl: "https://x/pr/1",
					},
					{
						index: 2,
						repo: "web",
						status: "succeeded",
						provider: "gemini",
						launchedAt: t(10),
						finishedAt: t(20),
						prUrl: "https://x/pr/2",
					},
				],
				21,
			),
			run(
				"B",
				"failed",
				[
					{
						repo: "api",
						status: "failed",
						provider: "claude",
						launchedAt: t(1),
						finishedAt: t(31),
					},
				],
				31,
			),
			run(
				"C",
				"succeeded",
				[
					{
						repo: "api",
						status: "succeeded",
						provider: "codex",
						launchedAt: t(0),
						finishedAt: t(4),
						prUrl: "https://x/pr/3",
					},
				],
				5,
			),
			run("D", "running", [
				{ repo: "api", status: "running", provider: "claude", launchedAt: t(3) },
			]),
			run("E", "cancelled", [{ repo: "web", status: "cancelled" }], 1),
		];
		const s = runStats(runs);
		expect(s.total).toBe(5);
		expect(s.counts).toEqual({
			queued: 0,
			planning: 0,
			running: 1,
			awaiting_approval: 0,
			succeeded: 2,
			failed: 1,
			cancelled: 1,
		});
		expect(s.successRate).toBeCloseTo(2 / 3);
		// Finished runs took 21, 31 and 5 minutes.
		expect(s.duration).toEqual({ medianSeconds: 21 * 60, p90Seconds: 31 * 60 });
		// A run's time to PR is its first PR: 10 min (A) and 4 min (C).
		expect(s.timeToPr).toEqual({ medianSeconds: 4 * 60, p90Seconds: 10 * 60 });
		expect(s.agentSeconds).toBe((2 + 8 + 10 + 30 + 4) * 60);

		expect(Object.keys(s.byRepo)).toEqual(["api", "web"]); // the planning step is no repo
		expect(s.byRepo.api).toEqual({
			finished: 3,
			succeeded: 2,
			failed: 1,
			successRate: 2 / 3,
			timeToPr: { medianSeconds: 4 * 60, p90Seconds: 10 * 60 },
			agentSeconds: (8 + 30 + 4) * 60,
			cost: { totalUsd: 0, knownUsd: 0 },
		});
		expect(s.byRepo.web).toMatchObject({
			finished: 1,
			succeeded: 1,
			timeToPr: { medianSeconds: 20 * 60 },
		});
		expect(s.byProvider.claude).toMatchObject({
			finished: 3,
			succeeded: 2,
			failed: 1,
			agentSeconds: (2 + 8 + 30) * 60,
		});
		expect(s.byProvider.gemini).toMatchObject({ succeeded: 1, timeToPr: { p90Seconds: 20 * 60 } });
		expect(s.byProvider.codex?.successRate).toBe(1);
	});
});
