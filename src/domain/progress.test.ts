import { describe, expect, it } from "vitest";
import { parseConfigText } from "../config/load";
import type { StepFinished } from "../queue/messages";
import {
	cancelPatch,
	decideOnStepFinished,
	failureSummary,
	nextWave,
	retryDelaySeconds,
	type StepOutcome,
	tasksToStop,
} from "./progress";
import { newRun, newStep, planStep, type Run, type Step, type StepReport, workSteps } from "./run";

const now = "2026-11-21T12:00:00.000Z";
const L = { maxAttempts: 3, parallelSteps: 1, retryBackoffSeconds: 0 };
function running(steps = 1, attempt = 1): Run {
	const run = newRun({ runId: "R1", source: "linear", issueId: "i", trigger: "webhook", now });
	return {
		...run,
		status: "running",
		steps: Array.from({ length: steps }, (_, i) => ({
			...newStep(i, `repo${i}`),
			...(i === 0 ? { status: "running" as const, attempt } : {}),
		})),
	};
}
const msg = (over: Partial<StepOutcome> = {}): StepOutcome => ({
	runId: "R1",
	stepIndex: 0,
	attempt: 1,
	outcome: "succeeded",
	prUrl: "https://github.com/a/b/pull/1",
	branch: "feat/x",
	...over,
});

describe("decideOnStepFinished", () => {
	it("finishes a one-step run on success", () => {
		const d = decideOnStepFinished(running(), msg(), now, L);
		expect(d.kind).toBe("finish");
		expect(d.patch?.set?.status).toBe("succeeded");
		expect(d.patch?.steps?.[0]).toMatchObject({
			status: "succeeded",
			prUrl: "https://github.com/a/b/pull/1",
			branch: "feat/x",
		});
	});

	it("launches the next pending step", () => {
		const d = decideOnStepFinished(running(2), msg(), now, L);
		expect(d).toMatchObject({ kind: "advance", launch: [1] });
		expect(d.patch?.steps?.[1]?.status).toBe("launching");
		expect(d.patch?.set).toBeUndefined();
	});

	it("retries a transient failure with the next attempt, then fails at max_attempts", () => {
		const d = decideOnStepFinished(
			running(),
			msg({ outcome: "failed", transient: true, error: "429" }),
			now,
			L,
		);
		expect(d).toMatchObject({ kind: "retry", attempt: 2 });
		expect(d.patch?.steps?.[0]).toMatchObject({
			status: "launching",
			attempt: 2,
			taskId: undefined,
		});
		const last = decideOnStepFinished(
			running(1, 3),
			msg({ attempt: 3, outcome: "failed", transient: true, error: "429" }),
			now,
			L,
		);
		expect(last.kind).toBe("finish");
		expect(last.patch?.set).toMatchObject({ status: "failed", error: "429" });
	});

	it("waits out a backoff before a retry, doubling it per attempt up to SQS's 15 minutes", () => {
		const limits = { ...L, maxAttempts: 9, retryBackoffSeconds: 10 };
		const d = decideOnStepFinished(
			running(),
			msg({ outcome: "failed", transient: true, error: "could not launch" }),
			now,
			limits,
		);
		expect(d).toMatchObject({ kind: "retry", attempt: 2, delaySeconds: 10 });
		expect(d.patch?.steps?.[0]).toMatchObject({
			status: "pending",
			attempt: 2,
			launchedAt: undefined,
			notBefore: new Date(Date.parse(now) + 10_000).toISOString(),
		});
		expect([2, 3, 4, 8, 9].map((a) => retryDelaySeconds(10, a))).toEqual([10, 20, 40, 640, 900]);
		expect(retryDelaySeconds(0, 5)).toBe(0);
	});

	it("counts a retry waiting out its backoff as active, and leaves its launch to its own message", () => {
		const steps = [
			{ ...newStep(0, "api"), order: 1, status: "pending" as const, attempt: 2, notBefore: now },
			{ ...newStep(1, "web"), order: 1 },
			{ ...newStep(2, "docs"), order: 1 },
		];
		expect(nextWave(steps, 2)).toEqual([1]);
		expect(nextWave(steps, 1)).toEqual([]);
	});

	it("fails the run on a permanent failure and cancels the remaining steps", () => {
		const d = decideOnStepFinished(
			running(3),
			msg({ outcome: "failed", error: "no commit" }),
			now,
			L,
		);
		expect(d.kind).toBe("finish");
		expect(d.patch?.set).toMatchObject({
			status: "failed",
			error:
				"step 1 (repo0) failed: no commit\nNo step succeeded.\nCancelled: step 2 (repo1), step 3 (repo2)",
		});
		expect(d.patch?.steps?.[1]?.status).toBe("cancelled");
		expect(d.patch?.steps?.[2]?.status).toBe("cancelled");
	});

	it("ignores duplicates, stale attempts, unknown steps and finished runs", () => {
		expect(decideOnStepFinished(running(1, 2), msg({ attempt: 1 }), now, L)).toMatchObject({
			kind: "ignore",
			reason: expect.stringMatching(/stale/),
		});
		const done = { ...running(), steps: [{ ...newStep(0, "r"), status: "succeeded" as const }] };
		expect(decideOnStepFinished(done, msg(), now, L)).toMatchObject({
			kind: "ignore",
			reason: "step already succeeded",
		});
		expect(decideOnStepFinished(running(), msg({ stepIndex: 4 }), now, L).kind).toBe("ignore");
		expect(decideOnStepFinished({ ...running(), status: "failed" }, msg(), now, L)).toMatchObject({
			kind: "ignore",
			reason: "run already failed",
		});
	});

	it("lets the report the task stored win over a failure Lisa concluded from a stale view", () => {
		const stored = (over: Partial<StepReport>): Run => {
			const run = running();
			const report = { attempt: 1, outcome: "succeeded" as const, at: now, ...over };
			return { ...run, steps: run.steps.map((s) => ({ ...s, report })) };
		};
		const lost = msg({ outcome: "failed", transient: true, error: "task lost", synthetic: true });
		const pr = "https://github.com/a/b/pull/7";
		const d = decideOnStepFinished(stored({ prUrl: pr, branch: "feat/y" }), lost, now, L);
		expect(d).toMatchObject({ kind: "finish", outcome: "succeeded" });
		expect(d.patch?.steps?.[0]).toMatchObject({ status: "succeeded", prUrl: pr, branch: "feat/y" });
		// A timeout concluded while the task reported a permanent failure: the task's reason stands.
		const timedOut = msg({
			outcome: "failed",
			transient: false,
			error: "timed out",
			synthetic: true,
		});
		const failed = decideOnStepFinished(
			stored({ outcome: "failed", error: "tests fail" }),
			timedOut,
			now,
			L,
		);
		expect(failed.patch?.steps?.[0]).toMatchObject({ status: "failed", error: "tests fail" });
		// A report of another attempt, or none, leaves the conclusion as it is.
		expect(decideOnStepFinished(stored({ attempt: 2 }), lost, now, L)).toMatchObject({
			kind: "retry",
			attempt: 2,
		});
		expect(decideOnStepFinished(running(), lost, now, L).kind).toBe("retry");
		// The task's own message is never replaced.
		const real = msg({ outcome: "failed", transient: true, error: "429" });
		expect(decideOnStepFinished(stored({}), real, now, L).kind).toBe("retry");
	});

	it("cancels every unfinished step with the run", () => {
		const p = cancelPatch(running(2), now, "stop");
		expect(p.set).toMatchObject({ status: "cancelled", error: "stop" });
		expect(Object.keys(p.steps ?? {})).toEqual(["0", "1"]);
	});
});

// ── multi-repo runs ─────────────────────────────────────────────────────────────────────────────

const config = parseConfigText(
	"repos:\n  - {name: api, url: file:///api}\n  - {name: web, url: file:///web}\n  - {name: docs, url: file:///docs}\n",
	"t.yaml",
);
function planning(): Run {
	const run = newRun({ runId: "R1", source: "linear", issueId: "i", trigger: "webhook", now });
	return {
		...run,
		status: "planning",
		config,
		steps: [{ ...planStep(0), status: "running", taskId: "t-plan" }],
	};
}
const planned = (plan: unknown) =>
	msg({ prUrl: undefined, branch: undefined, plan: plan as StepFinished["plan"] });
const twoOrders = {
	steps: [
		{ repo: "web", scope: "use the endpoint", order: 2 },
		{ repo: "api", scope: "add the endpoint", order: 1 },
	],
};

/** The run after a decision's patch (what the store writes). */
function apply(run: Run, d: ReturnType<typeof decideOnStepFinished>): Run {
	const steps =
		d.patch?.replaceSteps ?? run.steps.map((s) => ({ ...s, ...d.patch?.steps?.[s.index] }));
	return { ...run, ...d.patch?.set, steps } as Run;
}

describe("a planning step's report", () => {
	it("accepts a valid plan: the run runs, the plan is stored, one step per entry in order", () => {
		const d = decideOnStepFinished(planning(), planned(twoOrders), now, L);
		expect(d).toMatchObject({ kind: "advance", launch: [1] });
		const run = apply(planning(), d);
		expect(run.status).toBe("running");
		expect(run.plan?.steps.map((s) => s.repo)).toEqual(["api", "web"]);
		expect(run.steps.map((s) => [s.index, s.kind ?? s.repo, s.order, s.status])).toEqual([
			[0, "plan", undefined, "succeeded"],
			[1, "api", 1, "launching"],
			[2, "web", 2, "pending"],
		]);
		expect(run.steps[1]).toMatchObject({ scope: "add the endpoint", attempt: 1, launchedAt: now });
		// One write: the whole list (DynamoDB refuses steps[0].x with an append to steps).
		expect(d.patch?.steps).toBeUndefined();
		expect(d.patch?.appendSteps).toBeUndefined();
	});

	it("turns a one-repo plan into a normal single-step run", () => {
		const one = { steps: [{ repo: "web", scope: "only the UI", order: 1 }] };
		const run = apply(planning(), decideOnStepFinished(planning(), planned(one), now, L));
		expect(workSteps(run)).toEqual([expect.objectContaining({ repo: "web", status: "launching" })]);
	});

	it("checks the plan again: an unknown repo, a duplicate or no plan fails the run with the reasons", () => {
		const bad = {
			steps: [
				{ repo: "api", scope: "a", order: 1 },
				{ repo: "api", scope: "b", order: 2 },
				{ repo: "mobile", scope: "c", order: 3 },
			],
		};
		const d = decideOnStepFinished(planning(), planned(bad), now, L);
		expect(d).toMatchObject({ kind: "finish", outcome: "failed" });
		if (d.kind !== "finish") throw new Error("unreachable");
		expect(d.planErrors).toEqual([
			'steps.1.repo: "api" appears more than once',
			'steps.2.repo: "mobile" is not a configured repo (api, web, docs)',
		]);
		const run = apply(planning(), d);
		expect(run.error).toBe(`planning failed: the plan is invalid: ${d.planErrors?.join("; ")}`);
		expect(run.steps[0]?.status).toBe("failed");
		expect(run.plan).toBeUndefined();
		expect(decideOnStepFinished(planning(), planned(undefined), now, L)).toMatchObject({
			kind: "finish",
			planErrors: ["the planning step reported no plan"],
		});
	});

	it("fails the run when planning fails for good, and retries a transient failure", () => {
		const d = decideOnStepFinished(
			planning(),
			msg({ outcome: "failed", error: "invalid plan twice" }),
			now,
			L,
		);
		expect(apply(planning(), d).error).toBe("planning failed: invalid plan twice");
		expect(
			decideOnStepFinished(planning(), msg({ outcome: "failed", transient: true }), now, L),
		).toMatchObject({ kind: "retry", stepIndex: 0, attempt: 2 });
	});
});

describe("ordered steps", () => {
	const three = {
		steps: [
			{ repo: "api", scope: "a", order: 1 },
			{ repo: "docs", scope: "d", order: 1 },
			{ repo: "web", scope: "w", order: 2 },
		],
	};
	const finish = (run: Run, index: number, over: Partial<StepFinished> = {}) =>
		decideOnStepFinished(
			run,
			msg({ stepIndex: index, prUrl: `https://github.com/acme/x/pull/${index}`, ...over }),
			now,
			{ ...L, parallelSteps: run.config?.limits.parallel_steps ?? 1 },
		);
	const withParallel = (n: number): Run => ({
		...planning(),
		config: { ...config, limits: { ...config.limits, parallel_steps: n } },
	});

	it("runs equal orders one at a time by default, and the next order after all succeeded", () => {
		let run = apply(planning(), decideOnStepFinished(planning(), planned(three), now, L));
		expect(run.steps.filter((s) => s.status === "launching").map((s) => s.repo)).toEqual(["api"]);
		let d = finish(run, 1);
		expect(d).toMatchObject({ kind: "advance", launch: [2] });
		run = apply(run, d);
		d = finish(run, 2);
		expect(d).toMatchObject({ kind: "advance", launch: [3] });
		run = apply(run, d);
		d = finish(run, 3);
		expect(d).toMatchObject({ kind: "finish", outcome: "succeeded" });
		expect(apply(run, d).status).toBe("succeeded");
	});

	it("runs equal orders side by side up to parallel_steps, and waits for both", () => {
		const start = withParallel(2);
		let run = apply(start, decideOnStepFinished(start, planned(three), now, L_PAR(2)));
		expect(run.steps.filter((s) => s.status === "launching").map((s) => s.repo)).toEqual([
			"api",
			"docs",
		]);
		const d = finish(run, 2);
		expect(d).toMatchObject({ kind: "advance", launch: [] }); // api still runs
		run = apply(run, d);
		expect(finish(run, 1)).toMatchObject({ kind: "advance", launch: [3] });
	});

	it("stops the rest when a step fails: pending cancelled, running siblings stopped, successes named", () => {
		const start = withParallel(2);
		let run = apply(start, decideOnStepFinished(start, planned(three), now, L_PAR(2)));
		run = { ...run, steps: run.steps.map((s) => (s.index === 2 ? { ...s, taskId: "t-docs" } : s)) };
		run = apply(run, finish(run, 1)); // api succeeded; docs still running
		const d = finish(run, 2, { outcome: "failed", error: "tests fail", prUrl: undefined });
		expect(d).toMatchObject({ kind: "finish", outcome: "failed" });
		const failed = apply(run, d);
		expect(tasksToStop(failed)).toEqual([]);
		expect(failed.steps.map((s) => s.status)).toEqual([
			"succeeded",
			"succeeded",
			"failed",
			"cancelled",
		]);
		expect(failed.error).toBe(
			"step 2 (docs) failed: tests fail\nSucceeded: step 1 (api) https://github.com/acme/x/pull/1\nCancelled: step 3 (web)",
		);

		// A failure while a sibling runs stops that sibling's task.
		const both = apply(start, decideOnStepFinished(start, planned(three), now, L_PAR(2)));
		const running2 = {
			...both,
			steps: both.steps.map((s) => (s.index === 2 ? { ...s, taskId: "t-docs" } : s)),
		};
		const d2 = finish(running2, 1, { outcome: "failed", error: "boom", prUrl: undefined });
		expect(d2).toMatchObject({ kind: "finish" });
		expect(tasksToStop(apply(running2, d2))).toEqual(["t-docs"]);
		expect(apply(running2, d2).steps.map((s) => s.status)).toEqual([
			"succeeded",
			"failed",
			"cancelled",
			"cancelled",
		]);
	});
});

const L_PAR = (n: number) => ({ ...L, parallelSteps: n });

describe("nextWave", () => {
	const step = (index: number, order: number, status: Step["status"]): Step => ({
		...newStep(index, `r${index}`),
		order,
		status,
	});
	it("starts the lowest open order, within the parallelism left", () => {
		expect(
			nextWave([step(0, 1, "pending"), step(1, 1, "pending"), step(2, 2, "pending")], 1),
		).toEqual([0]);
		expect(
			nextWave([step(0, 1, "running"), step(1, 1, "pending"), step(2, 1, "pending")], 2),
		).toEqual([1]);
		expect(
			nextWave([step(0, 1, "succeeded"), step(1, 2, "pending"), step(2, 2, "pending")], 5),
		).toEqual([1, 2]);
		expect(nextWave([step(0, 1, "running"), step(1, 2, "pending")], 3)).toEqual([]);
		expect(nextWave([step(0, 1, "failed"), step(1, 2, "pending")], 3)).toEqual([]);
		expect(nextWave([{ ...planStep(0), status: "succeeded" }, step(1, 1, "pending")], 1)).toEqual([
			1,
		]);
	});
});

describe("failureSummary", () => {
	it("says only the error for a one-step run", () => {
		expect(failureSummary([{ ...newStep(0, "api"), status: "failed", error: "boom" }], 0)).toBe(
			"boom",
		);
	});
});
