import { describe, expect, it } from "vitest";
import {
	agentRunCost,
	attemptCost,
	attemptSpentUsd,
	computeUsdPerSecond,
	costLine,
	costOfAttempts,
	dearestPrice,
	FARGATE_LIST_PRICE,
	priceOf,
	sumCosts,
	usd,
} from "./cost";
import { type AgentRunUsage, type StepAttemptUsage, sumUsage } from "./usage";

const tokens = (input: number, output: number, cacheRead = 0, costUsd?: number) => ({
	inputTokens: input,
	outputTokens: output,
	cacheReadTokens: cacheRead,
	cacheWriteTokens: 0,
	...(costUsd === undefined ? {} : { costUsd }),
});
const costing = { prices: {}, computeUsdPerSecond: 0 };

describe("what an agent run costs", () => {
	it("is its tokens priced from the table, or what the CLI reported if more, else unknown (never zero)", () => {
		// claude-sonnet-4-5: $3 in, $15 out per million. The CLI's $1.84 is below 1M tokens in ($3).
		const reported: AgentRunUsage = {
			model: "claude",
			servedModel: "claude-sonnet-4-5-20250929",
			ok: true,
			usage: tokens(1e6, 0, 0, 1.84),
		};
		expect(agentRunCost(reported, {})).toEqual({ usd: 3, knownUsd: 3, spentUsd: 3 });
		const dearer = { ...reported, usage: tokens(1e5, 0, 0, 1.84) };
		expect(agentRunCost(dearer, {})).toEqual({ usd: 1.84, knownUsd: 1.84, spentUsd: 1.84 });
		// gpt-5-codex: $1.25 in, $10 out, $0.125 cached, per million.
		const priced: AgentRunUsage = {
			model: "codex:gpt-5-codex",
			ok: true,
			usage: tokens(2e6, 1e5, 4e6),
		};
		expect(agentRunCost(priced, {}).usd).toBeCloseTo(2.5 + 1 + 0.5, 9);
		const unknown: AgentRunUsage = { model: "codex:gpt-9-ultra", ok: true, usage: tokens(10, 1) };
		expect(agentRunCost(unknown, {})).toEqual({
			usd: null,
			knownUsd: 0,
			// The dearest list price: $15 in, $75 out per million.
			spentUsd: (10 * 15 + 75) / 1e6,
			unknown: "codex:gpt-9-ultra: no price (set pricing in the config)",
		});
		// The config's price wins; a bare provider is priced by the model its CLI said it served.
		const own = { "codex:gpt-9-ultra": { input: 1, output: 1, cache_read: 1, cache_write: 1 } };
		expect(agentRunCost(unknown, own).usd).toBeCloseTo(11 / 1e6, 12);
		const served: AgentRunUsage = {
			model: "gemini",
			servedModel: "gemini-2.5-pro",
			ok: true,
			usage: tokens(1e6, 0),
		};
		expect(agentRunCost(served, {}).usd).toBe(1.25);
		expect(agentRunCost({ model: "gemini", ok: true, usage: tokens(1, 1) }, {}).usd).toBeNull();
		expect(agentRunCost({ model: "claude", ok: false }, {})).toMatchObject({
			usd: null,
			spentUsd: 0,
		});
	});

	it("never takes a CLI's word below its tokens' price, nor a $0 for a model it cannot price", () => {
		// 1M output tokens of Claude Opus 4.1 ($75 a million) that the CLI called free.
		const free = (model: string): AgentRunUsage => ({
			model,
			ok: true,
			usage: tokens(0, 1e6, 0, 0),
		});
		expect(agentRunCost(free("claude:claude-opus-4-1"), {})).toEqual({
			usd: 75,
			knownUsd: 75,
			spentUsd: 75,
		});
		// Unpriced: unknown, the CLI's figure a floor; budgets count the dearest price (Opus 4.1's).
		expect(agentRunCost(free("claude:house-model-9"), {})).toEqual({
			usd: null,
			knownUsd: 0,
			spentUsd: 75,
			unknown:
				"claude:house-model-9: no price (set pricing in the config); its CLI reported $0.00, a floor",
		});
		// A CLI's figure above the dearest price is counted as it is; a dearer configured price raises the bound.
		const claimed = { ...free("claude:house-model-9"), usage: tokens(0, 1e6, 0, 90) };
		expect(agentRunCost(claimed, {})).toMatchObject({ usd: null, knownUsd: 90, spentUsd: 90 });
		const dear = { "codex:o9-pro": { input: 150, output: 600, cache_read: 0, cache_write: 0 } };
		expect(dearestPrice(dear)).toEqual({
			input: 150,
			output: 600,
			cache_read: 1.5,
			cache_write: 18.75,
		});
		expect(agentRunCost(free("claude:house-model-9"), dear).spentUsd).toBe(600);

		const cost = attemptCost(
			{
				runs: [free("claude:claude-opus-4-1"), free("claude:house-model-9")],
				total: tokens(0, 2e6),
			},
			0,
			costing,
		);
		expect(cost).toEqual({
			modelUsd: null,
			knownModelUsd: 75,
			spentModelUsd: 150,
			computeUsd: 0,
			unknown: [
				"claude:house-model-9: no price (set pricing in the config); its CLI reported $0.00, a floor",
			],
		});
		expect(attemptSpentUsd(cost)).toBe(150);
		// An attempt recorded before the field: its known spend.
		expect(attemptSpentUsd({ modelUsd: 2, knownModelUsd: 2, computeUsd: 0.5 })).toBe(2.5);
	});

	it("matches dated and vendor-prefixed names to the longest listed one", () => {
		expect(priceOf("claude:claude-sonnet-4-5-20250929", {})?.input).toBe(3);
		expect(priceOf("opencode:anthropic/claude-haiku-4-5", {})?.input).toBe(1);
		expect(priceOf("codex:gpt-5-mini", {})?.input).toBe(0.25);
		expect(priceOf("codex:gpt-5.1-codex-max", {})?.input).toBe(1.25);
		expect(priceOf("codex:gpt-50", {})).toBeUndefined();
	});
});

describe("what attempts and runs cost", () => {
	const attempt = (n: number, runs: AgentRunUsage[], seconds: number): StepAttemptUsage => {
		const usage = { runs, total: sumUsage(runs.map((r) => r.usage)) };
		const rate = computeUsdPerSecond(FARGATE_LIST_PRICE, { vcpu: 2, memoryGb: 4 });
		return {
			attempt: n,
			...usage,
			seconds,
			cost: attemptCost(usage, seconds, { prices: {}, computeUsdPerSecond: rate }),
		};
	};

	it("sums attempts; an unknown model makes the model cost null but keeps what is known", () => {
		const sonnet = { model: "claude", servedModel: "claude-sonnet-4-5", ok: true };
		const one = attempt(1, [{ ...sonnet, usage: tokens(10, 1, 0, 1) }], 3600);
		const two = attempt(2, [{ model: "codex:mystery", ok: true, usage: tokens(10, 1) }], 0);
		const fargateHour = 2 * 0.04048 + 4 * 0.004445 + 0.005;
		const known = costOfAttempts([one]);
		expect(known.modelUsd).toBe(1);
		expect(known.computeUsd).toBeCloseTo(fargateHour, 9);
		expect(known.totalUsd).toBeCloseTo(1 + fargateHour, 9);
		const both = sumCosts([known, costOfAttempts([two])]);
		expect(both.modelUsd).toBeNull();
		expect(both.totalUsd).toBeNull();
		expect(both.knownUsd).toBeCloseTo(1 + fargateHour, 9);
		expect(both.unknown).toEqual(["codex:mystery: no price (set pricing in the config)"]);
		expect(costLine(both)).toMatch(/^cost unknown \(at least \$1\.\d\d; codex:mystery/);
	});

	it("is free of compute on the local stack", () => {
		expect(computeUsdPerSecond(FARGATE_LIST_PRICE, undefined)).toBe(0);
		expect(attemptCost(undefined, 600, costing)).toEqual({
			modelUsd: 0,
			knownModelUsd: 0,
			computeUsd: 0,
		});
	});

	it("reads as one line in the final comment", () => {
		const c = costOfAttempts([
			attempt(
				1,
				[
					{
						model: "claude",
						servedModel: "claude-sonnet-4-5",
						ok: true,
						usage: tokens(400_000, 12_000, 0, 1.84),
					},
				],
				540,
			),
		]);
		expect(costLine({ ...c, computeUsd: 0, totalUsd: 1.84 })).toBe(
			"cost $1.84: 412k tokens, 9 agent minutes",
		);
	});
});

describe("money as text", () => {
	it("is one way, in cents, whatever the amount (never $0.7600 beside $1.83)", () => {
		expect([0, 0.0042, 0.005, 0.76, 1.834, 12].map(usd)).toEqual([
			"$0.00",
			"<$0.01",
			"$0.01",
			"$0.76",
			"$1.83",
			"$12.00",
		]);
		expect(usd(null)).toBe("unknown");
	});
});
