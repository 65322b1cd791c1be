import { describe, expect, it } from "vitest";
import {
	canRun,
	nextRunStatus,
	nextStepStatus,
	RUN_EVENTS,
	RUN_STATUSES,
	type RunEvent,
	type RunStatus,
	STEP_EVENTS,
	STEP_STATUSES,
	type StepEvent,
	type StepStatus,
	TransitionError,
} from "./states";

// Every (state, event) pair: the legal ones with their target, everything else illegal.
const LEGAL_RUN: Record<string, RunStatus> = {
	"queued/plan": "planning",
	"queued/start": "running",
	"queued/fail": "failed",
	"queued/cancel": "cancelled",
	"planning/start": "running",
	"planning/fail": "failed",
	"planning/cancel": "cancelled",
	"running/succeed": "succeeded",
	"running/fail": "failed",
	"running/cancel": "cancelled",
	"planning/pause": "awaiting_approval",
	"running/pause": "awaiting_approval",
	"awaiting_approval/plan": "planning",
	"awaiting_approval/start": "running",
	"awaiting_approval/fail": "failed",
	"awaiting_approval/cancel": "cancelled",
};

const LEGAL_STEP: Record<string, StepStatus> = {
	"pending/launch": "launching",
	"pending/fail": "failed",
	"pending/cancel": "cancelled",
	"launching/started": "running",
	"launching/retry": "launching",
	"launching/defer": "pending",
	"launching/succeed": "succeeded",
	"launching/fail": "failed",
	"launching/cancel": "cancelled",
	"running/retry": "launching",
	"running/defer": "pending",
	"running/succeed": "succeeded",
	"running/fail": "failed",
	"running/cancel": "cancelled",
};

const runPairs = RUN_STATUSES.flatMap((s) =>
	RUN_EVENTS.map((e) => [s, e] as [RunStatus, RunEvent]),
);
const stepPairs = STEP_STATUSES.flatMap((s) =>
	STEP_EVENTS.map((e) => [s, e] as [StepStatus, StepEvent]),
);

describe("run state machine", () => {
	it.each(runPairs)("%s + %s", (from, event) => {
		const to = LEGAL_RUN[`${from}/${event}`];
		expect(canRun(from, event)).toBe(to !== undefined);
		if (to) expect(nextRunStatus(from, event)).toBe(to);
		else expect(() => nextRunStatus(from, event)).toThrow(TransitionError);
	});

	it("has no way out of a terminal status", () => {
		for (const s of ["succeeded", "failed", "cancelled"] as const)
			expect(RUN_EVENTS.filter((e) => canRun(s, e))).toEqual([]);
	});
});

describe("step state machine", () => {
	it.each(stepPairs)("%s + %s", (from, event) => {
		const to = LEGAL_STEP[`${from}/${event}`];
		if (to) expect(nextStepStatus(from, event)).toBe(to);
		else expect(() => nextStepStatus(from, event)).toThrow(/illegal step transition/);
	});
});
