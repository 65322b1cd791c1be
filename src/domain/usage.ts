import * as z from "zod";

// What the agents of a step attempt used (docs/agent-task.md › Checks, validation and retries):
// tokens as each agent CLI or the built-in agent's endpoint reported them, and the cost where the
// CLI reports one (its word only: what an attempt cost is decided in src/domain/cost.ts).

const tokens = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const tokenUsageSchema = z.object({
	inputTokens: tokens,
	outputTokens: tokens,
	/** Input read from the provider's prompt cache (counted in neither of the above). */
	cacheReadTokens: tokens,
	/** Input written to the provider's prompt cache. */
	cacheWriteTokens: tokens,
	costUsd: z.number().min(0).max(1e9).optional(),
});
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

/** One agent run of an attempt: a model of the fallback chain, or a validation retry. */
const agentRunUsageSchema = z.object({
	/** The `models` entry that ran ("codex", "claude:opus"). */
	model: z.string().max(200),
	/** The model the CLI said it served, when the entry names none (priced by it). */
	servedModel: z.string().max(200).optional(),
	ok: z.boolean(),
	turns: z.number().int().min(0).optional(),
	/**
	 * The tokens it used: as Lisa's model broker counted them from the model's answers, or, for a
	 * key the broker does not keep, as the CLI reported them. Absent when nothing counted any.
	 */
	usage: tokenUsageSchema.optional(),
	/** What the CLI reported, when the broker counted: kept for comparison, never priced. */
	reported: tokenUsageSchema.optional(),
});
export type AgentRunUsage = z.infer<typeof agentRunUsageSchema>;

/** An attempt's agent runs, in order, and their sum. */
export const attemptUsageSchema = z.object({
	runs: z.array(agentRunUsageSchema).max(100),
	total: tokenUsageSchema,
});
export type AttemptUsage = z.infer<typeof attemptUsageSchema>;

/** An attempt's cost (src/domain/cost.ts), kept with its usage so a later price change never rewrites history. */
export interface AttemptCost {
	/** Null when some agent run's cost is unknown (`unknown` says which). */
	modelUsd: number | null;
	/** The model spend that is known (an unpriced model's CLI figure is a floor). */
	knownModelUsd: number;
	/**
	 * With some run's cost unknown, what a budget counts of the model spend: each such run at the
	 * larger of its CLI's figure and its tokens at the dearest price (absent: `knownModelUsd`).
	 */
	spentModelUsd?: number;
	computeUsd: number;
	unknown?: string[];
}

/** Kept on the step, one per attempt that ended: its usage, container time and cost. */
export type StepAttemptUsage = AttemptUsage & {
	attempt: number;
	/** The attempt's container time (launch to report), and when it was recorded. */
	seconds?: number;
	endedAt?: string;
	/** Priced when the attempt was recorded (docs/cost.md › Cost and budgets). */
	cost?: AttemptCost;
};

/** The sum of what was reported; a cost only when some run reported one. */
export function sumUsage(list: readonly (TokenUsage | undefined)[]): TokenUsage {
	const total: TokenUsage = {
		inputTokens: 0,
		outputTokens: 0,
		cacheReadTokens: 0,
		cacheWriteTokens: 0,
	};
	for (const u of list) {
		if (!u) continue;
		total.inputTokens += u.inputTokens;
		total.outputTokens += u.outputTokens;
		total.cacheReadTokens += u.cacheReadTokens;
		total.cacheWriteTokens += u.cacheWriteTokens;
		if (u.costUsd !== undefined) total.costUsd = (total.costUsd ?? 0) + u.costUsd;
	}
	return total;
}

/** The attempt's usage from its agent runs; undefined when no agent ran. */
export function attemptUsage(runs: readonly AgentRunUsage[]): AttemptUsage | undefined {
	if (!runs.length) return undefined;
	return { runs: [...runs], total: sumUsage(runs.map((r) => r.usage)) };
}

const NO_USAGE: AttemptUsage = {
	runs: [],
	total: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
};

/**
 * The step's usage list with this attempt's (once: a redelivered report replaces its own). An
 * attempt whose agents reported nothing is kept too when its container ran: that time was billed.
 */
export function withAttemptUsage(
	list: readonly StepAttemptUsage[] | undefined,
	attempt: number,
	usage: AttemptUsage | undefined,
	spent?: { seconds: number; endedAt: string; cost: AttemptCost },
): StepAttemptUsage[] | undefined {
	if (!usage && !spent?.seconds) return list ? [...list] : undefined;
	return [
		...(list ?? []).filter((u) => u.attempt !== attempt),
		{ attempt, ...(usage ?? NO_USAGE), ...spent },
	];
}
