import { usd } from "../../domain/cost";
import type { StepBudget } from "../../domain/run";

/** What part of the step failed: it decides whether later runs of the repo learn from it. */
export type FailureKind =
	| "config"
	| "checkout"
	| "setup"
	| "agent"
	| "validation"
	| "gate"
	| "timeout"
	| "publish"
	| "plan"
	| "budget";

/**
 * A failure with the text to report and whether another attempt could succeed. `lesson`: the same
 * failure in Lisa's own words only (no output of the agent or its commands), for the repo's
 * guardrails; a failure without one teaches nothing.
 */
export class StepFailure extends Error {
	constructor(
		message: string,
		readonly transient: boolean,
		readonly kind: FailureKind = "agent",
		readonly lesson?: string,
	) {
		super(message);
		this.name = "StepFailure";
	}
}

/**
 * The run's cost reached `limits.max_run_cost_usd` (docs/cost.md › Cost and budgets): the agent is
 * stopped, nothing is pushed, and the report says what was spent so the pipeline asks for approval.
 */
export class BudgetStop extends StepFailure {
	/** What the run had spent when its budget stopped the attempt, and its limit. */
	constructor(readonly budget: StepBudget) {
		super(
			`stopped: the run's cost reached ${usd(budget.spentUsd)} of its ${usd(budget.limitUsd)} limit (limits.max_run_cost_usd)`,
			false,
			"budget",
		);
		this.name = "BudgetStop";
	}
}

/** The step is no longer this attempt's (a write of it was refused): stop, push nothing, report nothing. */
export class Superseded extends Error {
	constructor() {
		super("the step is no longer this attempt's");
		this.name = "Superseded";
	}
}
