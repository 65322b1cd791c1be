import type { Run, RunPatch, Step } from "../domain/run";
import type { RunStatus } from "../domain/states";

export interface Page<T> {
	items: T[];
	nextCursor?: string;
}

/** Which runs a listing wants; every field narrows it. Times are ISO, `until` exclusive. */
export interface RunFilter {
	status?: RunStatus;
	source?: string;
	/** A configured repo's name: runs with a step in it. */
	repo?: string;
	/** The tracker's issue id or key. */
	issue?: string;
	/** Created at or after. */
	since?: string;
	/** Created before. */
	until?: string;
}

/** The fields of its own step the agent task may write. */
export type TaskStepFields = Partial<
	Pick<
		Step,
		"agentState" | "heartbeatAt" | "report" | "provider" | "branch" | "prUrl" | "validation"
	>
>;

/**
 * Runs, each with its steps as one record, so every transition is one version-checked write
 * (docs/architecture.md › Things that bite).
 */
export interface RunStore {
	/** Creates the run; false when a run with this id already exists (a redelivered request). */
	createRun(run: Run): Promise<boolean>;
	getRun(runId: string): Promise<Run | undefined>;
	/** Applies `patch` if the run is still at `run.version`; returns the new run or throws VersionConflict. */
	updateRun(run: Run, patch: RunPatch, now: string): Promise<Run>;
	/**
	 * The task's own writes: fields of its step, only while the step is still on the task's attempt
	 * and still launching or running: false tells the task of a cancelled, finished or superseded
	 * attempt to stop. Never touches the run's status or version.
	 */
	updateStepFields(
		runId: string,
		stepIndex: number,
		attempt: number,
		fields: TaskStepFields,
	): Promise<boolean>;
	/** Runs matching `q`, newest first, a page at a time; a foreign cursor throws InvalidCursor. */
	listRuns(q: RunFilter & { limit: number; cursor?: string }): Promise<Page<Run>>;
	/** Runs created in [since, until), newest first, at most `cap`, with only `fields` read. */
	runsCreatedBetween<F extends keyof Run>(
		since: string,
		until: string,
		cap: number,
		fields: readonly F[],
	): Promise<{ runs: Pick<Run, F>[]; truncated: boolean }>;
	/** Runs in `status` last updated in [after, before) (ISO times), oldest first: the sweeper's query. */
	runsByStatus(
		status: RunStatus,
		window: { after?: string; before: string },
		limit?: number,
	): Promise<Run[]>;
	/** An issue's runs, newest first. */
	runsOfIssue(source: string, issueId: string, limit?: number): Promise<Run[]>;
}
