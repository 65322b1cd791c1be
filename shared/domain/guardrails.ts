import { headTail } from "./redact";

// Guardrails (seed 000 §A9): what went wrong on earlier runs of a repository, offered to later
// prompts so the agent avoids the same pitfalls. Bounded in number and size, redacted before storing.

export const MAX_GUARDRAILS = 5;
const MAX_SUMMARY = 600;

export interface Guardrail {
	at: string;
	runId: string;
	issueKey?: string;
	provider?: string;
	/** validation: a validate command failed; gate: the work failed a publishing gate; agent: the agent failed. */
	failure: "validation" | "gate" | "agent";
	summary: string;
}

export function guardrailSummary(text: string): string {
	return headTail(text.trim(), MAX_SUMMARY);
}
