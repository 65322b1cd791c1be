import type {
	AgentRunUsage,
	AttemptCost,
	AttemptUsage,
	StepAttemptUsage,
	TokenUsage,
} from "./usage";

// What a run costs (docs/cost.md › Cost and budgets): the model spend of every agent run, the
// larger of what its CLI reported and its tokens priced from a table, plus the agent containers'
// time. A cost nobody can know is null and says why; it is never a guessed zero.

/** USD per million tokens. */
export interface TokenPrice {
	input: number;
	output: number;
	cache_read: number;
	cache_write: number;
}

/** `pricing` in the config: `"<provider>:<model>"` → price; the built-in list is keyed by model. */
export type PriceTable = Readonly<Record<string, TokenPrice>>;

/** The vendors' list prices for the common models (standard tier, prompts under 200k tokens), as
 * their pricing pages gave them on 2025-11-24. */
const LIST_PRICES: PriceTable = {
	"claude-opus-4-5": { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
	"claude-opus-4-1": { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 },
	"claude-opus-4": { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 },
	"claude-sonnet-4-5": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
	"claude-sonnet-4": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
	"claude-haiku-4-5": { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
	opus: { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
	sonnet: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
	haiku: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
	"gpt-5.1": { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 },
	"gpt-5.1-codex": { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 },
	"gpt-5.1-codex-mini": { input: 0.25, output: 2, cache_read: 0.025, cache_write: 0 },
	"gpt-5": { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 },
	"gpt-5-codex": { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 },
	"gpt-5-mini": { input: 0.25, output: 2, cache_read: 0.025, cache_write: 0 },
	"gpt-5-nano": { input: 0.05, output: 0.4, cache_read: 0.005, cache_write: 0 },
	"gpt-4.1": { input: 2, output: 8, cache_read: 0.5, cache_write: 0 },
	"gpt-4.1-mini": { input: 0.4, output: 1.6, cache_read: 0.1, cache_write: 0 },
	"gpt-4o": { input: 2.5, output: 10, cache_read: 1.25, cache_write: 0 },
	"gpt-4o-mini": { input: 0.15, output: 0.6, cache_read: 0.075, cache_write: 0 },
	"gemini-3-pro-preview": { input: 2, output: 12, cache_read: 0.2, cache_write: 0 },
	"gemini-2.5-pro": { input: 1.25, output: 10, cache_read: 0.125, cache_write: 0 },
	"gemini-2.5-flash": { input: 0.3, output: 2.5, cache_read: 0.03, cache_write: 0 },
	"gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cache_read: 0.01, cache_write: 0 },
};

/** `compute_pricing` in the config: the agent container's price (Fargate on demand, x86). */
export interface ComputePrice {
	vcpu_hour: number;
	gb_hour: number;
	/** The task's public IPv4 address. */
	ipv4_hour: number;
}

/** AWS's list prices in us-east-1 (docs/deploying.md › What a run costs). */
export const FARGATE_LIST_PRICE: ComputePrice = {
	vcpu_hour: 0.04048,
	gb_hour: 0.004445,
	ipv4_hour: 0.005,
};

/** The agent task's size where it runs on Fargate; locally there is none and compute is free. */
export interface TaskSize {
	vcpu: number;
	memoryGb: number;
}

/** USD a second of one agent task costs: zero without a task size (the local stack). */
export function computeUsdPerSecond(price: ComputePrice, size: TaskSize | undefined): number {
	if (!size) return 0;
	return (size.vcpu * price.vcpu_hour + size.memoryGb * price.gb_hour + price.ipv4_hour) / 3600;
}

/** How a run prices what its agents used: its config's table over the list, and its task's rate. */
export interface Costing {
	prices: PriceTable;
	computeUsdPerSecond: number;
}

/** A run's costing: its config snapshot's prices and its deployment's task size. */
export const costingOf = (
	config: { pricing: PriceTable; compute_pricing: ComputePrice } | undefined,
	size: TaskSize | undefined,
): Costing => ({
	prices: config?.pricing ?? {},
	computeUsdPerSecond: computeUsdPerSecond(config?.compute_pricing ?? FARGATE_LIST_PRICE, size),
});

/** The price of `spec` ("provider" or "provider:model"), or of the model the CLI said it served. */
export function priceOf(
	spec: string,
	prices: PriceTable,
	servedModel?: string,
): TokenPrice | undefined {
	const colon = spec.indexOf(":");
	const provider = colon < 0 ? spec : spec.slice(0, colon);
	const model = colon < 0 ? servedModel : spec.slice(colon + 1);
	if (!model) return undefined;
	const exact = prices[`${provider}:${model}`];
	if (exact) return exact;
	// "anthropic/claude-sonnet-4-5-20250929" → the longest listed name it starts with.
	const name = model.slice(model.lastIndexOf("/") + 1).toLowerCase();
	const hit = Object.keys(LIST_PRICES)
		.filter((k) => name === k || name.startsWith(`${k}-`) || name.startsWith(`${k}@`))
		.sort((a, b) => b.length - a.length)[0];
	return hit ? LIST_PRICES[hit] : undefined;
}

/** What these tokens cost at this price. */
const priced = (u: TokenUsage, p: TokenPrice) =>
	(u.inputTokens * p.input +
		u.outputTokens * p.output +
		u.cacheReadTokens * p.cache_read +
		u.cacheWriteTokens * p.cache_write) /
	1e6;

/** Per kind of token, the dearest price Lisa knows (the list's and the config's). */
export function dearestPrice(prices: PriceTable): TokenPrice {
	const all = [...Object.values(LIST_PRICES), ...Object.values(prices)];
	const most = (kind: keyof TokenPrice) => Math.max(...all.map((p) => p[kind]));
	return {
		input: most("input"),
		output: most("output"),
		cache_read: most("cache_read"),
		cache_write: most("cache_write"),
	};
}

/** One agent run's model cost, as recorded and as a budget counts it. */
export interface AgentRunCost {
	/** The larger of the CLI's figure and the tokens at the model's price; null when unknown. */
	usd: number | null;
	/** What is known for sure: `usd`, else the CLI's figure (a floor), else 0. */
	knownUsd: number;
	/** What a budget counts: `usd`, else the larger of the CLI's figure and the tokens at the dearest price. */
	spentUsd: number;
	/** Why `usd` is null. */
	unknown?: string;
}

/**
 * The one decision of what an agent run cost (docs/cost.md › Cost and budgets). A CLI's own figure
 * can be low (its price table, a summary that disagrees with what it streamed, a forged `0`), so it
 * is never believed below the tokens at the model's price. A model Lisa cannot price makes the cost
 * unknown, the CLI's figure only a floor; a budget counts such a run's tokens at the dearest price
 * it knows, so an unpriced model never spends unwatched.
 */
export function agentRunCost(run: AgentRunUsage, prices: PriceTable): AgentRunCost {
	const u = run.usage;
	if (!u)
		return { usd: null, knownUsd: 0, spentUsd: 0, unknown: `${run.model}: reported no usage` };
	const reported = u.costUsd ?? 0;
	const p = priceOf(run.model, prices, run.servedModel);
	if (p) {
		const cost = Math.max(reported, priced(u, p));
		return { usd: cost, knownUsd: cost, spentUsd: cost };
	}
	const name = run.servedModel ? `${run.model} (${run.servedModel})` : run.model;
	const floor = u.costUsd === undefined ? "" : `; its CLI reported ${usd(u.costUsd)}, a floor`;
	return {
		usd: null,
		knownUsd: reported,
		spentUsd: Math.max(reported, priced(u, dearestPrice(prices))),
		unknown: `${name}: no price (set pricing in the config)${floor}`,
	};
}

export function attemptCost(
	usage: AttemptUsage | undefined,
	seconds: number,
	costing: Costing,
): AttemptCost {
	let known = 0;
	let spent = 0;
	const unknown: string[] = [];
	for (const run of usage?.runs ?? []) {
		const c = agentRunCost(run, costing.prices);
		known += c.knownUsd;
		spent += c.spentUsd;
		if (c.unknown) unknown.push(c.unknown);
	}
	return {
		modelUsd: unknown.length ? null : known,
		knownModelUsd: known,
		...(unknown.length ? { spentModelUsd: spent } : {}),
		computeUsd: Math.max(0, seconds) * costing.computeUsdPerSecond,
		...(unknown.length ? { unknown } : {}),
	};
}

/** What a budget counts of an attempt: its model spend (an unknown run's as it was counted) and compute. */
export const attemptSpentUsd = (c: AttemptCost | undefined): number =>
	c ? (c.spentModelUsd ?? c.knownModelUsd) + c.computeUsd : 0;

/** What a budget counts of a run's own steps (its follow-up rounds are runs of their own). */
export const runSpentUsd = (run: {
	steps: readonly { usage?: readonly StepAttemptUsage[] }[];
}): number =>
	run.steps.reduce(
		(sum, s) => sum + (s.usage ?? []).reduce((n, a) => n + attemptSpentUsd(a.cost), 0),
		0,
	);

/** What a run (or a step, or several runs) cost, summed from its attempts. */
export interface Cost {
	/** Null when some agent run's cost is unknown. */
	modelUsd: number | null;
	computeUsd: number;
	/** model + compute; null with the model's. */
	totalUsd: number | null;
	/** What is known for sure: priced model spend (or a CLI's figure, a floor) plus compute. */
	knownUsd: number;
	/** The agent runs whose cost is unknown, and why. */
	unknown: string[];
	tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
	agentSeconds: number;
}

export const NO_COST: Cost = {
	modelUsd: 0,
	computeUsd: 0,
	totalUsd: 0,
	knownUsd: 0,
	unknown: [],
	tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	agentSeconds: 0,
};

/** The cost of these attempts; an attempt recorded before costs were kept adds its tokens only. */
export function costOfAttempts(attempts: readonly StepAttemptUsage[]): Cost {
	const out = structuredClone(NO_COST) as Cost;
	let model: number | null = 0;
	for (const a of attempts) {
		out.tokens.input += a.total.inputTokens;
		out.tokens.output += a.total.outputTokens;
		out.tokens.cacheRead += a.total.cacheReadTokens;
		out.tokens.cacheWrite += a.total.cacheWriteTokens;
		out.agentSeconds += a.seconds ?? 0;
		const c = a.cost;
		if (!c) {
			model = null;
			out.unknown.push(`attempt ${a.attempt}: recorded before costs were kept`);
			continue;
		}
		out.knownUsd += c.knownModelUsd + c.computeUsd;
		out.computeUsd += c.computeUsd;
		if (c.modelUsd === null || model === null) model = null;
		else model += c.modelUsd;
		out.unknown.push(...(c.unknown ?? []));
	}
	out.modelUsd = model;
	out.totalUsd = model === null ? null : model + out.computeUsd;
	return out;
}

/** The sum of several costs (a run's steps, a run and its rounds, a window of runs). */
export function sumCosts(costs: readonly Cost[]): Cost {
	const out = structuredClone(NO_COST) as Cost;
	let model: number | null = 0;
	for (const c of costs) {
		model = model === null || c.modelUsd === null ? null : model + c.modelUsd;
		out.computeUsd += c.computeUsd;
		out.knownUsd += c.knownUsd;
		out.unknown.push(...c.unknown);
		out.tokens.input += c.tokens.input;
		out.tokens.output += c.tokens.output;
		out.tokens.cacheRead += c.tokens.cacheRead;
		out.tokens.cacheWrite += c.tokens.cacheWrite;
		out.agentSeconds += c.agentSeconds;
	}
	out.modelUsd = model;
	out.totalUsd = model === null ? null : model + out.computeUsd;
	return out;
}

/** A step's cost: every attempt that reported, planning steps included. */
export const stepCost = (step: { usage?: readonly StepAttemptUsage[] }): Cost =>
	costOfAttempts(step.usage ?? []);

/** A run's own cost (its follow-up rounds are runs of their own). */
export const runCost = (run: { steps: readonly { usage?: readonly StepAttemptUsage[] }[] }): Cost =>
	sumCosts(run.steps.map(stepCost));

/** Money one way, in cents: "$1.84", "$0.76", "<$0.01" for a cost under half a cent; "unknown" for null. */
export function usd(value: number | null): string {
	if (value === null) return "unknown";
	return value > 0 && value < 0.005 ? "<$0.01" : `$${value.toFixed(2)}`;
}

/** "412k" tokens. */
function compact(n: number): string {
	if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
	if (n >= 1e3) return `${Math.round(n / 1e3)}k`;
	return String(n);
}

/** "cost $1.84: 412k tokens, 9 agent minutes" — the line of the final tracker comment. */
export function costLine(cost: Cost): string {
	const tokens =
		cost.tokens.input + cost.tokens.output + cost.tokens.cacheRead + cost.tokens.cacheWrite;
	const minutes = Math.round(cost.agentSeconds / 60);
	const what =
		cost.totalUsd === null
			? `cost unknown (at least ${usd(cost.knownUsd)}; ${cost.unknown[0]}${cost.unknown.length > 1 ? ` and ${cost.unknown.length - 1} more` : ""})`
			: `cost ${usd(cost.totalUsd)}`;
	return `${what}: ${compact(tokens)} tokens, ${minutes} agent minute${minutes === 1 ? "" : "s"}`;
}
