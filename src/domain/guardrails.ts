import { type GateName, WORKFLOWS_DIR } from "./gates";
import { headTail } from "./redact";

// Guardrails (docs/agent-task.md › Checks, validation and retries): what went wrong on earlier runs
// of a repository, offered to later prompts so the agent avoids the same pitfalls. They outlive the
// run that wrote them, so they hold only what Lisa itself wrote — which check failed, the team's
// command and its exit code, the gate — never output of the agent or its commands, which a crafted
// issue could turn into instructions for every later run. Bounded in number, size and age; redacted
// before storing.

export const MAX_GUARDRAILS = 5;
/** Older guardrails are ignored: the repository has probably moved on. */
export const GUARDRAIL_MAX_AGE_DAYS = 30;
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

/** A failed publishing gate in Lisa's words (no file names: the agent chose them). */
export function gateLesson(gate: GateName): string {
	switch (gate) {
		case "commit":
			return "the agent finished without committing any change";
		case "base":
			return "the agent's commits did not build on the base branch";
		case "diff":
			return "the agent's commits changed nothing compared with the base branch";
		case "workflows":
			return `the change touched ${WORKFLOWS_DIR}, which this repository does not allow`;
		case "secrets":
			return "the change held a secret (an API key or token) and was not published";
		case "moved":
			return "the agent's commit changed while the validate commands ran (they must not commit)";
		case "manifest":
			return "the agent did not write a valid .lisa-manifest.json";
	}
}

/** The guardrails still worth showing: at most `GUARDRAIL_MAX_AGE_DAYS` old. */
export function freshGuardrails(list: readonly Guardrail[], now: number): Guardrail[] {
	const oldest = now - GUARDRAIL_MAX_AGE_DAYS * 24 * 60 * 60 * 1000;
	return list.filter((g) => Date.parse(g.at) >= oldest);
}
