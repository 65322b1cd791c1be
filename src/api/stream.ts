import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Run } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import type { ApiDeps } from "./deps";
import { type RoundSeen, runDetailView } from "./run-view";

/** How often an open stream looks for changes: two small reads per connection, and one per unfinished follow-up round. */
const STREAM_POLL_MS = 1000;
/** A comment this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/** An open stream ends after this long; the browser reconnects (Last-Event-ID) and goes on. */
const MAX_OPEN_MS = 30 * 60 * 1000;
/** What the browser waits before reconnecting, when a stream ends before the run does. */
const RETRY_MS = 2000;
/** How long a finished run's stream waits for the tracker effects (and their events) to be done. */
const FINALIZE_GRACE_MS = 60_000;

/**
 * The stream ends once nothing more will be written: the run is finished and finalized (its last
 * events, `run.<status>` and the tracker's, are written before `tracker.done`), or a finalize that
 * keeps failing has had its grace.
 */
function streamOver(run: Run, now: Date): boolean {
	if (!isTerminalRun(run.status)) return false;
	const finished = Date.parse(run.finishedAt ?? run.updatedAt);
	return run.tracker.done === true || now.getTime() - finished > FINALIZE_GRACE_MS;
}

/**
 * `GET /api/runs/:id/stream` as Server-Sent Events: `run` (the run's view, on connect and whenever
 * it changes), `timeline` (each new event, with its id, so a reconnect resumes after it), and
 * `end` once the run is finished and nothing more will be written. Where responses are buffered
 * (Lambda), each request answers with what is new and ends; the SSE `retry` makes the browser ask
 * again.
 */
export function runStream(
	c: Context,
	deps: ApiDeps,
	first: Run,
	resumeAfter: string | undefined,
	pollMs = STREAM_POLL_MS,
): Response {
	const id = first.runId;
	return streamSSE(
		c,
		async (stream) => {
			let after = resumeAfter;
			let lastView = "";
			const rounds = new Map<string, RoundSeen>();
			const opened = Date.now();
			let lastWrite = opened;
			let run: Run | undefined = first;
			while (run && !stream.aborted) {
				const view = await runDetailView(run, deps, rounds);
				// The duration grows by itself; only a change of the run is news.
				const seen = JSON.stringify({ ...view, durationSeconds: undefined });
				if (seen !== lastView) {
					await stream.writeSSE({ event: "run", data: JSON.stringify(view), retry: RETRY_MS });
					lastView = seen;
					lastWrite = Date.now();
				}
				let page: Awaited<ReturnType<ApiDeps["store"]["listEvents"]>>;
				do {
					page = await deps.store.listEvents(id, 100, { after });
					for (const event of page.items) {
						await stream.writeSSE({ event: "timeline", id: event.id, data: JSON.stringify(event) });
						after = event.id;
						lastWrite = Date.now();
					}
				} while (page.nextCursor && !stream.aborted);
				if (streamOver(run, deps.now())) {
					await stream.writeSSE({ event: "end", data: JSON.stringify({ status: run.status }) });
					return;
				}
				if (!deps.settings.liveStream || Date.now() - opened > MAX_OPEN_MS) return;
				if (Date.now() - lastWrite > KEEPALIVE_MS) {
					await stream.write(": keepalive\n\n");
					lastWrite = Date.now();
				}
				await stream.sleep(pollMs);
				run = await deps.store.getRun(id);
			}
		},
		async (err, stream) => {
			deps.log.error({ err, runId: id }, "run stream failed");
			await stream.writeSSE({ event: "error", data: JSON.stringify({ error: "internal error" }) });
		},
	);
}
