// Run and step state machines (docs/how-a-run-works.md › How a run works). Pure: callers persist
// the result with a conditional write.

export const RUN_STATUSES = [
	"queued",
	"planning",
	"running",
	/** The run's cost passed its limit: nothing runs until someone approves more, or it expires. */
	"awaiting_approval",
	"succeeded",
	"failed",
	"cancelled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const STEP_STATUSES = [
	"pending",
	"launching",
	"running",
	"succeeded",
	"failed",
	"cancelled",
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const AGENT_STATES = [
	"just_started",
	"in_progress",
	"waiting_input",
	"stuck",
	"crashed",
	"completed",
] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** `pause`: the budget ran out; `plan` or `start` go on after an approval. */
export const RUN_EVENTS = ["plan", "start", "pause", "succeed", "fail", "cancel"] as const;
export type RunEvent = (typeof RUN_EVENTS)[number];

/** `retry` launches the next attempt now; `defer` waits for it pending (a retry's backoff). */
export const STEP_EVENTS = [
	"launch",
	"started",
	"retry",
	"defer",
	"succeed",
	"fail",
	"cancel",
] as const;
export type StepEvent = (typeof STEP_EVENTS)[number];

const RUN_TRANSITIONS: Record<RunStatus, Partial<Record<RunEvent, RunStatus>>> = {
	// A single-repo run skips planning: queued → running.
	queued: { plan: "planning", start: "running", fail: "failed", cancel: "cancelled" },
	planning: { start: "running", pause: "awaiting_approval", fail: "failed", cancel: "cancelled" },
	running: {
		succeed: "succeeded",
		pause: "awaiting_approval",
		fail: "failed",
		cancel: "cancelled",
	},
	// Approved: back to planning (the plan was not accepted yet) or to work.
	awaiting_approval: { plan: "planning", start: "running", fail: "failed", cancel: "cancelled" },
	succeeded: {},
	failed: {},
	cancelled: {},
};

const STEP_TRANSITIONS: Record<StepStatus, Partial<Record<StepEvent, StepStatus>>> = {
	// A step that never launched fails when launching is impossible, or is cancelled with its run.
	pending: { launch: "launching", fail: "failed", cancel: "cancelled" },
	// The task may report before the launcher recorded it as running (crash between the two writes).
	launching: {
		started: "running",
		retry: "launching",
		defer: "pending",
		succeed: "succeeded",
		fail: "failed",
		cancel: "cancelled",
	},
	running: {
		retry: "launching",
		defer: "pending",
		succeed: "succeeded",
		fail: "failed",
		cancel: "cancelled",
	},
	succeeded: {},
	failed: {},
	cancelled: {},
};

export class TransitionError extends Error {
	constructor(kind: "run" | "step", from: string, event: string) {
		super(`illegal ${kind} transition: cannot ${event} from ${from}`);
		this.name = "TransitionError";
	}
}

export function nextRunStatus(from: RunStatus, event: RunEvent): RunStatus {
	const to = RUN_TRANSITIONS[from][event];
	if (!to) throw new TransitionError("run", from, event);
	return to;
}

export function nextStepStatus(from: StepStatus, event: StepEvent): StepStatus {
	const to = STEP_TRANSITIONS[from][event];
	if (!to) throw new TransitionError("step", from, event);
	return to;
}

export function canRun(from: RunStatus, event: RunEvent): boolean {
	return RUN_TRANSITIONS[from][event] !== undefined;
}

export type TerminalRunStatus = "succeeded" | "failed" | "cancelled";

export function isTerminalRun(status: RunStatus): status is TerminalRunStatus {
	return status === "succeeded" || status === "failed" || status === "cancelled";
}

/** The statuses of a run still under way. */
export const ACTIVE_RUN_STATUSES = RUN_STATUSES.filter((s) => !isTerminalRun(s));

export function isTerminalStep(status: StepStatus): boolean {
	return status === "succeeded" || status === "failed" || status === "cancelled";
}
