import type { AgentState } from "../../domain/states";

// The agent's state (docs/agent-task.md › Supervision), classified for a process Lisa owns: it
// knows whether the process runs and how it exited, so no pane or process-tree probing is needed.
// Pure: the supervisor feeds it.

export interface AgentObservation {
	running: boolean;
	/** Exit code once the process ended (null when killed by a signal). */
	exitCode: number | null;
	/** Lisa stopped the process (stuck, step timeout, cancellation). */
	killed: boolean;
	/** Whether the agent has produced any output or workspace change yet. */
	active: boolean;
	/** Time since the last output or workspace change (since the start when there was none). */
	silentMs: number;
	/** The last lines of output. */
	tail: string;
	/** `limits.stale_output_seconds` in ms. */
	staleMs: number;
}

/** How long a prompt-looking last line must stay quiet before it counts as waiting for input. */
function promptQuietMs(staleMs: number): number {
	return Math.min(10_000, Math.floor(staleMs / 2));
}

// A last line that says the agent is busy is never an input prompt (as the original Lisa CLI learnt).
const BUSY =
	/\b(?:working|running|loading|thinking|installing|building|compiling|testing|searching)\b/i;

const INPUT_PROMPTS: readonly RegExp[] = [
	/^[>›❯]$/, // claude's and codex's bare prompt (the whole line, not a `>` at the end of any line)
	/❯\s*(?:\d+[smh]\s*)?\d{1,2}:\d{2}:\d{2}$/, // codex's prompt with its clock
	/press enter to (?:send|continue)/i,
	/[([](?:y\/n|yes\/no)[)\]]\s*[:?]?$/i,
	/^(?:username|password)\b[^\n]*:$/i, // git or a package manager asking for credentials
	/\b(?:passphrase|password) for\b[^\n]*:$/i,
];

/** Whether the last non-empty line of the output looks like a prompt for input. */
export function looksLikeInputPrompt(tail: string): boolean {
	const lines = tail
		.replace(/\r/g, "")
		.split("\n")
		.map((l) => l.trim())
		.filter(Boolean);
	const last = lines[lines.length - 1];
	if (!last || BUSY.test(last)) return false;
	return INPUT_PROMPTS.some((re) => re.test(last));
}

/**
 * The agent's state, in the original Lisa CLI's priority order: an ended process is completed or crashed; a
 * process silent for `staleMs` is stuck (stdin is closed, so a prompt nobody answers is stuck too);
 * a quiet prompt is waiting_input; any activity is in_progress; otherwise it has just started.
 */
export function classifyAgent(o: AgentObservation): AgentState {
	if (!o.running) return o.exitCode === 0 && !o.killed ? "completed" : "crashed";
	if (o.silentMs >= o.staleMs) return "stuck";
	if (o.silentMs >= promptQuietMs(o.staleMs) && looksLikeInputPrompt(o.tail))
		return "waiting_input";
	return o.active ? "in_progress" : "just_started";
}

/** Lisa kills a stuck agent; the next model of the chain may do better. */
export function shouldKill(state: AgentState): boolean {
	return state === "stuck";
}

/**
 * When the task gives up on a step: `step_timeout_minutes` after the launch, a little early (10%,
 * at most 30 s) so the task reports before the sweeper's own timeout for the step fires.
 */
export function stepDeadline(launchedAt: string | undefined, minutes: number, now: number): number {
	const budget = minutes * 60_000;
	const launched = launchedAt ? Date.parse(launchedAt) : Number.NaN;
	const start = Number.isFinite(launched) ? Math.min(launched, now) : now;
	return start + budget - Math.min(30_000, budget / 10);
}
