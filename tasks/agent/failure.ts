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
	| "plan";

/** A failure with the text to report and whether another attempt could succeed. */
export class StepFailure extends Error {
	constructor(
		message: string,
		readonly transient: boolean,
		readonly kind: FailureKind = "agent",
	) {
		super(message);
		this.name = "StepFailure";
	}
}
