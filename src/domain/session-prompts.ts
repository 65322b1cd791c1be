import type { Run, SessionPrompt } from "./run";

/** Follow-ups kept on a run: each is at most 4 KB, so they stay far below DynamoDB's 400 KB item. */
export const MAX_PROMPTS = 20;

type Prompts = Pick<Run, "prompts" | "promptsDropped">;

/**
 * The run's follow-ups with `prompt` added, oldest first, the newest `max` kept and the rest
 * counted. Undefined when there is nothing to add: the prompt is known, or (a redelivery of one
 * dropped earlier) older than every prompt kept.
 */
export function addPrompt(
	run: Prompts,
	prompt: SessionPrompt,
	max = MAX_PROMPTS,
): Required<Prompts> | undefined {
	const kept = run.prompts ?? [];
	const dropped = run.promptsDropped ?? 0;
	if (kept.some((p) => p.id === prompt.id)) return undefined;
	const oldest = kept[0];
	if (dropped > 0 && oldest && prompt.at <= oldest.at) return undefined;
	const all = [...kept, prompt].sort((a, b) => a.at.localeCompare(b.at));
	const over = Math.max(0, all.length - max);
	return { prompts: all.slice(over), promptsDropped: dropped + over };
}
