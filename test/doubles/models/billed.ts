import type { TokenUsage } from "../../../src/domain/usage";

// What a model double answered with, in Lisa's counts (cached input apart): the truth a count of
// its answers (the model broker's) is held to.

export const noTokens = (): TokenUsage => ({
	inputTokens: 0,
	outputTokens: 0,
	cacheReadTokens: 0,
	cacheWriteTokens: 0,
});

export function bill(total: TokenUsage, answer: Partial<TokenUsage>): void {
	total.inputTokens += answer.inputTokens ?? 0;
	total.outputTokens += answer.outputTokens ?? 0;
	total.cacheReadTokens += answer.cacheReadTokens ?? 0;
	total.cacheWriteTokens += answer.cacheWriteTokens ?? 0;
}
