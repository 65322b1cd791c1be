import { describe, expect, it } from "vitest";
import type { ConfigState } from "../config/load";
import { parseConfigText } from "../config/load";
import { newRun, newStep, planStep, type Run } from "../domain/run";
import type { StepAttemptUsage } from "../domain/usage";
import { runAnswer } from "./answers";
import { type RoundSeen, runDetailView, runView } from "./run-view";

const config = parseConfigText(
	"repos:\n  - {name: api, url: file:///a}\n  - {name: web, url: file:///w}\nlimits:\n  max_run_cost_usd: 5\n",
	"t.yaml",
);
const NOW = "2026-11-24T10:00:00.000Z";

function deps(runs: Run[] = [], state: ConfigState = { status: "ok", file: "t.yaml", config }) {
	const reads: string[] = [];
	return {
		reads,
		runUrl: (id: string) => `http://lisa/runs/${id}`,
		now: () => new Date(NOW),
		config: () => state,
		store: {
			getRun: async (id: string) => {
				reads.push(id);
				return runs.find((r) => r.runId === id);
			},
		},
	};
}

const tokens = (input: number) => ({
	inputTokens: input,
	outputTokens: 1_000,
	cacheReadTokens: 500,
	cacheWriteTokens: 0,
});

/** An attempt priced when it was recorded; `model: null` is a model nobody could price. */
const attempt = (n: number, model: number | null, compute: number, seconds: number) =>
	({
		attempt: n,
		runs: [{ model: model === null ? "acme:x1" : "claude", ok: true, usage: tokens(10_000 * n) }],
		total: tokens(10_000 * n),
		seconds,
		cost: {
			modelUsd: model,
			knownModelUsd: model ?? 0,
			computeUsd: compute,
			...(model === null ? { unknown: ["acme:x1: no price (set pricing in the config)"] } : {}),
		},
	}) satisfies StepAttemptUsage;

function aRun(id: string, steps: Run["steps"], over: Partial<Run> = {}): Run {
	return {
		...newRun({ runId: id, source: "linear", issueId: `i-${id}`, trigger: "webhook", now: NOW }),
		status: "running",
		config,
		steps,
		...over,
	} as Run;
}

// A planning step, two repository steps (api retried once), and web's attempt on an unpriced model.
const planned = aRun("01RUN", [
	{ ...planStep(0), status: "succeeded", usage: [attempt(1, 0.25, 0.01, 60)] },
	{
		...newStep(1, "api"),
		status: "succeeded",
		attempt: 2,
		usage: [attempt(1, 0.5, 0.02, 120), attempt(2, 1, 0.03, 180)],
	},
	{ ...newStep(2, "web"), status: "running", usage: [attempt(1, null, 0.04, 240)] },
]);

describe("a run's cost in the API", () => {
	it("is the sum of its attempts, planning included; an unknown model makes it unknown, not zero", () => {
		const view = runAnswer.parse(runView(planned, deps()));
		const [plan, api, web] = view.steps;
		expect(plan?.cost).toMatchObject({ modelUsd: 0.25, computeUsd: 0.01, totalUsd: 0.26 });
		expect(api?.cost.totalUsd).toBeCloseTo(1.55);
		expect(api?.cost).toMatchObject({ unknown: [], agentSeconds: 300 });
		expect(api?.cost.tokens).toEqual({
			input: 30_000,
			output: 2_000,
			cacheRead: 1_000,
			cacheWrite: 0,
		});
		expect(web?.cost).toMatchObject({
			modelUsd: null,
			totalUsd: null,
			knownUsd: 0.04,
			unknown: ["acme:x1: no price (set pricing in the config)"],
		});
		// Each attempt keeps its own cost and container time.
		expect(api?.usage?.map((u) => [u.attempt, u.seconds, u.cost?.modelUsd])).toEqual([
			[1, 120, 0.5],
			[2, 180, 1],
		]);

		expect(view.cost.modelUsd).toBeNull();
		expect(view.cost.totalUsd).toBeNull();
		expect(view.cost.knownUsd).toBeCloseTo(0.25 + 0.01 + 0.5 + 0.02 + 1 + 0.03 + 0.04);
		expect(view.cost.computeUsd).toBeCloseTo(0.1);
		expect(view.cost.unknown).toEqual(["acme:x1: no price (set pricing in the config)"]);
		expect(view.cost.agentSeconds).toBe(600);
		expect(view.cost.tokens.input).toBe(10_000 + 10_000 + 20_000 + 10_000);
		// The run's sum is the sum of its steps.
		const known = view.steps.reduce((sum, s) => sum + s.cost.knownUsd, 0);
		expect(view.cost.knownUsd).toBeCloseTo(known);
		expect(view.usage.inputTokens).toBe(view.cost.tokens.input);
		// The list has no rounds read: no cost with rounds.
		expect(view).not.toHaveProperty("costWithFollowUps");
	});

	it("is known when every attempt is; an attempt recorded before costs were kept is unknown", () => {
		const priced = aRun("01OK", [
			{ ...newStep(0, "api"), status: "succeeded", usage: [attempt(1, 1.5, 0.34, 540)] },
		]);
		expect(runView(priced, deps()).cost).toMatchObject({
			modelUsd: 1.5,
			computeUsd: 0.34,
			knownUsd: 1.84,
			unknown: [],
		});
		expect(runView(priced, deps()).cost.totalUsd).toBeCloseTo(1.84);
		const { cost: _cost, seconds: _seconds, ...old } = attempt(1, 1, 0, 0);
		const before = aRun("01OLD", [{ ...newStep(0, "api"), status: "succeeded", usage: [old] }]);
		expect(runView(before, deps()).cost).toMatchObject({
			totalUsd: null,
			unknown: ["attempt 1: recorded before costs were kept"],
		});
	});

	it("adds the follow-up rounds, each read once it ended", async () => {
		const done = aRun(
			"01R1",
			[{ ...newStep(0, "api"), status: "succeeded", usage: [attempt(1, 0.5, 0.1, 60)] }],
			{ status: "succeeded", parentRunId: "01PARENT" },
		);
		const going = aRun(
			"01R2",
			[{ ...newStep(0, "api"), status: "running", usage: [attempt(1, 0.2, 0.1, 60)] }],
			{ parentRunId: "01PARENT" },
		);
		const round = (runId: string) => ({
			runId,
			trigger: "ci_failure" as const,
			prUrl: "https://github.com/acme/api/pull/1",
			at: NOW,
		});
		const parent = aRun(
			"01PARENT",
			[{ ...newStep(0, "api"), status: "succeeded", usage: [attempt(1, 1, 0.2, 60)] }],
			{
				status: "succeeded",
				followUps: { rounds: [round("01R1"), round("01R2")], pending: [] },
			},
		);
		const d = deps([done, going]);
		const known = new Map<string, RoundSeen>();
		const view = runAnswer.parse(await runDetailView(parent, d, known));
		expect(view.cost.totalUsd).toBeCloseTo(1.2);
		expect(view.costWithFollowUps?.totalUsd).toBeCloseTo(1.2 + 0.6 + 0.3);
		expect(view.costWithFollowUps?.agentSeconds).toBe(180);
		expect(view.followUps.map((f) => f.status)).toEqual(["succeeded", "running"]);
		// A stream's next look reads the round still going, not the one that ended.
		await runDetailView(parent, d, known);
		expect(d.reads).toEqual(["01R1", "01R2", "01R2"]);
	});

	it("shows the run's limit, the approval it waits for and those it had", () => {
		expect(runView(planned, deps()).limitUsd).toBe(5);
		const approval = {
			requestedAt: NOW,
			spentUsd: 5.02,
			limitUsd: 5,
			proposedLimitUsd: 10.02,
			steps: [2],
			resume: "running" as const,
		};
		const approvals = [
			{
				by: "ada",
				via: "github" as const,
				at: NOW,
				limitUsd: 5,
				spentUsd: 2,
				requestedAt: NOW,
				steps: [1],
			},
		];
		const waiting = runAnswer.parse(
			runView(
				{ ...planned, status: "awaiting_approval", limitUsd: 7, approval, approvals },
				deps(),
			),
		);
		expect(waiting).toMatchObject({ status: "awaiting_approval", limitUsd: 7, approvals });
		expect(waiting.approval).toMatchObject({
			spentUsd: 5.02,
			limitUsd: 5,
			proposedLimitUsd: 10.02,
		});
		// Before its config snapshot: the current config's limit, or none without a config.
		const queued = { ...planned, config: undefined };
		expect(runView(queued, deps()).limitUsd).toBe(5);
		expect(runView(queued, deps([], { status: "missing", file: "t.yaml" })).limitUsd).toBeNull();
	});
});

describe("an epic phase's files", () => {
	it("are not in the run's answer: the research and the task bodies stay on the run", () => {
		const run: Run = {
			...newRun({ runId: "01EPIC", source: "linear", issueId: "i", trigger: "api", now: NOW }),
			epic: { tasks: [] },
			steps: [
				{
					...newStep(0, "*"),
					kind: "research",
					status: "failed",
					report: {
						attempt: 1,
						outcome: "succeeded",
						research: { text: "SECRET-RESEARCH" },
						epicPlan: { text: "SECRET-PLAN", tasks: [] },
						at: NOW,
					},
				},
			],
		};
		const shown = JSON.stringify(runView(run, deps()));
		expect(shown).not.toContain("SECRET-RESEARCH");
		expect(shown).not.toContain("SECRET-PLAN");
		expect(runView(run, deps()).steps[0]?.report).toEqual({
			attempt: 1,
			outcome: "succeeded",
			at: NOW,
		});
	});
});
