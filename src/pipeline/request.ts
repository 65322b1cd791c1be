import type { SourceName } from "../config/schema";
import type { Trigger } from "../domain/run";
import { runRequested } from "../queue/messages";
import type { PipelineDeps } from "./deps";

/**
 * A new run for an issue (`lisa run` polling, POST /api/runs; `kind: "epic"`: `lisa plan`, POST
 * /api/epics, docs/epics.md › Epics): `run.requested` now; its run id.
 */
export async function requestRun(
	deps: Pick<PipelineDeps, "queue" | "now"> & { newRunId(): string },
	source: SourceName,
	issue: { id: string; key?: string },
	trigger: Extract<Trigger, "poll" | "api">,
	kind?: "epic",
): Promise<string> {
	const runId = deps.newRunId();
	await deps.queue.send(
		"intake",
		runRequested({
			source,
			issueId: issue.id,
			issueKey: issue.key,
			trigger,
			requestedAt: deps.now().toISOString(),
			runId,
			...(kind ? { kind } : {}),
		}),
	);
	return runId;
}
