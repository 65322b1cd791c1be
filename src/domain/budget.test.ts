import { describe, expect, it } from "vitest";
import { commentRefusal, type RunMoney, withBudget } from "./budget";
import { decideOnStepFinished, type StepOutcome } from "./progress";
import { newRun, newStep, planStep, type Run } from "./run";

// The budget applied to what a step's report decided (docs/cost.md › Cost and budgets).

const now = "2026-11-24T12:00:00.000Z";
const launchedAt = "2026-11-24T11:00:00.000Z";
const L = { maxAttempts: 3, parallelSteps: 1, retryBackoffSeconds: 0 };
const costing = { prices: {}, computeUsdPerSecond: 0 };
const money = (othersUsd = 0): RunMoney => ({ costing, limitUsd: 5, othersUsd, stepUsd: 5 });

/** A run of two steps of orders 1 and 2; the first is running. */
function twoSteps(): Run {
	const run = newRun({ runId: "R1", source: "linear", issueId: "i", trigger: "webhook", now });
	return {
		...run,
		status: "running",
		steps: [
			{ ...newStep(0, "api"), order: 1, status: "running", launchedAt },
			{ ...newStep(1, "web"), order: 2 },
		],
	};
}
const usage = (usd: number) => {
	const u = {
		inputTokens: 1,
		outputTokens: 1,
		cacheReadTokens: 0,
		cacheWriteTokens: 0,
		costUsd: usd,
	};
	return { runs: [{ model: "claude", ok: true, usage: u }], total: u };
};
const report = (over: Partial<StepOutcome>): StepOutcome => ({
	runId: "R1",
	stepIndex: 0,
	attempt: 1,
	outcome: "succeeded",
	prUrl: "https://github.com/acme/api/pull/1",
	...over,
});
const decide = (run: Run, msg: StepOutcome, m: RunMoney) =>
	withBudget(
		run,
		decideOnStepFinished(run, msg, now, L, costing),
		msg.budget ? msg.stepIndex : undefined,
		m,
		now,
	);

describe("withBudget", () => {
	it("under the limit, the next step launches knowing what was spent", () => {
		const d = decide(twoSteps(), report({ usage: usage(1) }), money(0.5));
		expect(d.kind).toBe("advance");
		expect(d.patch?.steps?.[1]).toMatchObject({
			status: "launching",
			budget: { limitUsd: 5, spentUsd: 1.5 },
		});
	});

	it("past the limit, the next step stays pending and the run asks; the PR step is kept", () => {
		const d = decide(twoSteps(), report({ usage: usage(4) }), money(1.5));
		expect(d.kind).toBe("pause");
		if (d.kind !== "pause") return;
		expect(d.patch.set).toMatchObject({ status: "awaiting_approval" });
		expect(d.request).toEqual({
			requestedAt: now,
			spentUsd: 5.5,
			limitUsd: 5,
			proposedLimitUsd: 10.5,
			steps: [1],
			resume: "running",
		});
		expect(d.patch.steps?.[0]).toMatchObject({ status: "succeeded" });
		expect(d.patch.steps?.[1]).toBeUndefined();
	});

	it("a task stopped at the limit waits as its next attempt, and a planning run resumes planning", () => {
		const run: Run = {
			...twoSteps(),
			status: "planning",
			steps: [{ ...planStep(0), status: "running", launchedAt }],
		};
		const d = decide(
			run,
			report({
				outcome: "failed",
				error: "stopped",
				usage: usage(5.01),
				budget: { spentUsd: 5.01, limitUsd: 5 },
			}),
			money(),
		);
		expect(d.kind).toBe("pause");
		if (d.kind !== "pause") return;
		expect(d.request).toMatchObject({ steps: [0], resume: "planning", spentUsd: 5.01 });
		expect(d.patch.steps?.[0]).toMatchObject({ status: "pending", attempt: 2 });
		expect(d.patch.steps?.[0]?.error).toContain("stopped: the run's cost reached $5.01");
	});

	it("a non-budget failure still fails the run", () => {
		const d = decide(twoSteps(), report({ outcome: "failed", error: "tests fail" }), money(9));
		expect(d.kind).toBe("finish");
	});

	it("a paused run keeps what would start for the approval", () => {
		const run: Run = {
			...twoSteps(),
			status: "awaiting_approval",
			approval: {
				requestedAt: launchedAt,
				spentUsd: 6,
				limitUsd: 5,
				proposedLimitUsd: 11,
				steps: [2],
				resume: "running",
			},
		};
		const d = decide(run, report({ outcome: "failed", error: "429", transient: true }), money(6));
		expect(d.kind).toBe("pause");
		if (d.kind !== "pause") return;
		expect(d.request).toMatchObject({ requestedAt: launchedAt, steps: [0, 2] });
		expect(d.patch.set?.status).toBe("awaiting_approval");
	});
});

describe("commentRefusal", () => {
	const request = { requestedAt: "2026-11-24T12:00:00.000Z" };
	const comment = (writtenAt?: string) => ({ id: "comment-7", writtenAt });

	it("approves with a comment written since the request, once", () => {
		expect(commentRefusal(request, [], comment("2026-11-24T12:00:00.000Z"))).toBeUndefined();
		expect(commentRefusal(request, [{}], comment("2026-11-24T12:05:00.000Z"))).toBeUndefined();
		expect(
			commentRefusal(request, [{ commentId: "comment-7" }], comment("2026-11-24T12:05:00.000Z")),
		).toBe("comment-7 already approved a request");
	});

	it("never with a comment older than the request, or of no known time", () => {
		expect(commentRefusal(request, [], comment("2026-11-24T11:59:59.999Z"))).toBe(
			"comment-7 was written at 2026-11-24T11:59:59.999Z, before the request of 2026-11-24T12:00:00.000Z",
		);
		expect(commentRefusal(request, [], comment())).toBe("comment-7 says no time it was written");
	});

	it("fails closed on a GitHub time (whole seconds) of the request's own second", () => {
		const late = { requestedAt: "2026-11-24T12:00:00.500Z" };
		expect(commentRefusal(late, [], comment("2026-11-24T12:00:00Z"))).toMatch(/before the request/);
		expect(commentRefusal(late, [], comment("2026-11-24T12:00:01Z"))).toBeUndefined();
	});
});
