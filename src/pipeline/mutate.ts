import type { TimelineEventType } from "../domain/events";
import type { Run, RunPatch } from "../domain/run";
import { VersionConflict } from "../store";
import type { PipelineDeps } from "./deps";

const MAX_TRIES = 8;

/**
 * Read-decide-write with optimistic locking: `decide` sees the current run and returns a patch (or
 * none); on a version conflict the run is read again and decided again.
 */
export async function mutate<T extends { patch?: RunPatch }>(
	deps: Pick<PipelineDeps, "store" | "now">,
	runId: string,
	decide: (run: Run) => T,
): Promise<{ run: Run; decision: T; changed: boolean } | undefined> {
	for (let i = 0; i < MAX_TRIES; i++) {
		const run = await deps.store.getRun(runId);
		if (!run) return undefined;
		const decision = decide(run);
		if (!decision.patch) return { run, decision, changed: false };
		try {
			const next = await deps.store.updateRun(run, decision.patch, deps.now().toISOString());
			return { run: next, decision, changed: true };
		} catch (err) {
			if (!(err instanceof VersionConflict)) throw err;
		}
	}
	throw new Error(`run ${runId}: gave up after ${MAX_TRIES} concurrent updates`);
}

/** Appends to the run's timeline; a timeline write never fails the caller. */
export async function note(
	deps: Pick<PipelineDeps, "store" | "log">,
	runId: string,
	type: TimelineEventType,
	message: string,
	extra: { step?: number; data?: Record<string, unknown> } = {},
): Promise<void> {
	try {
		await deps.store.appendEvent(runId, { type, message, ...extra });
	} catch (err) {
		deps.log.warn({ err, runId, type }, "could not append run event");
	}
}
