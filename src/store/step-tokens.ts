/**
 * Which attempt of which step a code host token was minted for, and the nonce its launch handed
 * that attempt's task alone: another task of the same role cannot name the token.
 */
interface AttemptKey {
	runId: string;
	stepIndex: number;
	attempt: number;
	nonce: string;
}

/**
 * The code host token minted for one attempt (a GitHub App's,
 * docs/trackers.md › As a GitHub App (a token per step)): the pipeline puts it before the launch,
 * the attempt's task takes it once. It never rides in a task definition or in the launch's
 * overrides, where whoever may describe tasks would read it.
 */
export interface StepTokenStore {
	/** Keeps `token` for the attempt until `expiresAt` (ISO 8601), replacing one kept before. */
	putStepToken(attempt: AttemptKey, token: string, expiresAt: string): Promise<void>;
	/** The attempt's token, removed in the same request; undefined when none is kept or it expired. */
	takeStepToken(attempt: AttemptKey, nowMs: number): Promise<string | undefined>;
}
