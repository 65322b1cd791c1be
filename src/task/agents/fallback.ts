import { lastLines } from "../../domain/redact";
import { isTransientFailure } from "../../domain/transient";

// The fallback chain over `models` (the original Lisa CLI's runWithFallback;
// docs/agent-task.md › Providers and models): the next model only when a failure is transient,
// anything else stops the chain with its reason. Pure: the task runs the agents.

/** What one agent run came to, as the supervisor saw it. */
export interface AgentRunFacts {
	ok: boolean;
	exitCode: number | null;
	/** Killed by Lisa because it produced nothing for `stale_output_seconds`. */
	stuck: boolean;
	/** The provider's own verdict when it has one (the built-in agent knows HTTP statuses). */
	transient?: boolean;
	/** The signal that ended it, when one did. */
	signal?: string | null;
	output: string;
}

export interface Verdict {
	transient: boolean;
	reason: string;
}

/** How an agent run ended: its exit code, or killed (no code) by a signal. */
export const exitText = (code: number | null, signal?: string | null): string =>
	code === null ? `was killed${signal ? ` by ${signal}` : ""}` : `exited with code ${code}`;

/**
 * Killed by SIGKILL from outside Lisa (a shell reports it as 137): on Linux most often the
 * out-of-memory killer. Nothing in the work was wrong, so another try may succeed.
 */
const killedOutright = (r: AgentRunFacts) => r.signal === "SIGKILL" || r.exitCode === 137;

export function failureVerdict(name: string, r: AgentRunFacts, staleSeconds: number): Verdict {
	if (r.stuck)
		return {
			transient: true,
			reason: `${name} produced no output for ${staleSeconds} s and was killed as stuck`,
		};
	const tail = lastLines(r.output, 15);
	if (killedOutright(r))
		return {
			transient: true,
			reason: `${name} was killed by SIGKILL (out of memory?)${tail ? `: ${tail}` : ""}`,
		};
	return {
		transient: r.transient ?? isTransientFailure(r.output),
		reason: `${name} ${exitText(r.exitCode, r.signal)}${tail ? `: ${tail}` : ""}`,
	};
}

export interface ChainAttempt {
	spec: string;
	reason: string;
	transient: boolean;
}

const MAX_REASON = 400;
const clip = (s: string) => (s.length > MAX_REASON ? `${s.slice(0, MAX_REASON)}…` : s);

/** The failure of a chain that ran out of models: the one reason, or each model's in order. */
export function exhaustedError(attempts: readonly ChainAttempt[]): string {
	if (attempts.length === 1) return attempts[0]?.reason ?? "no model could run";
	if (attempts.length === 0) return "no models configured";
	return `all models failed: ${attempts.map((a, i) => `${i + 1}. ${a.spec}: ${clip(a.reason)}`).join("; ")}`;
}
