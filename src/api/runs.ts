import { Hono } from "hono";
import { isTerminalRun } from "../domain/states";
import { approveRequested, cancelRequested, requestAgain } from "../queue/messages";
import { InvalidCursor } from "../store";
import type { AuthEnv } from "./auth";
import type { ApiDeps } from "./deps";
import { epicsRoutes } from "./epics";
import { answer, BAD_RUN_ID, NO_RUN, refusal, routeDoc } from "./route-doc";
import { runDetailView, runView } from "./run-view";
import {
	approveBody,
	eventsQuery,
	listQuery,
	runPath,
	statsQuery,
	streamHeaders,
	streamQuery,
} from "./schemas";
import { startDoc, startRequested } from "./start";
import { defaultSince, rebuildDayStats, windowStats } from "./stats";
import { runStream } from "./stream";
import { validated, validationError } from "./validation";

/** A cursor the client changed or made up is its mistake (400), not ours. */
async function paged(c: { json: (b: unknown, s: 400) => Response }, read: () => Promise<Response>) {
	try {
		return await read();
	} catch (err) {
		if (err instanceof InvalidCursor) return c.json({ error: "invalid cursor" }, 400);
		throw err;
	}
}

export function runsRoutes(deps: ApiDeps): Hono<AuthEnv> {
	const api = new Hono<AuthEnv>();

	// What the token may do, so a page offers only the actions it can take (the dashboard).
	api.get(
		"/whoami",
		routeDoc({
			summary: "What the token presented may do",
			responses: { 200: answer("The token's role", "whoamiAnswer") },
		}),
		(c) => c.json({ role: c.get("role") }),
	);

	api.get(
		"/runs",
		routeDoc({
			summary: "Runs, newest first, filtered and paged",
			responses: {
				200: answer("A page of runs; `nextCursor` is null on the last", "runsAnswer"),
				400: refusal("A bad filter, or a cursor this listing did not make"),
			},
		}),
		validated("query", listQuery),
		(c) =>
			paged(c, async () => {
				const q = c.req.valid("query");
				if (q.since && q.until && q.since >= q.until)
					return c.json({ error: "since must be before until" }, 400);
				const page = await deps.store.listRuns(q);
				return c.json({
					runs: page.items.map((r) => runView(r, deps)),
					nextCursor: page.nextCursor ?? null,
				});
			}),
	);

	// Every route under /runs/:id takes the id as the store writes it (a ULID), or answers 400.
	const runId = validated("param", runPath);

	api.get(
		"/runs/:id",
		routeDoc({
			summary: "A run with its steps",
			responses: { 200: answer("The run", "runAnswer"), 400: BAD_RUN_ID, 404: NO_RUN },
		}),
		runId,
		async (c) => {
			const run = await deps.store.getRun(c.req.valid("param").id);
			if (!run) return c.json({ error: "run not found" }, 404);
			return c.json(await runDetailView(run, deps));
		},
	);

	api.get(
		"/runs/:id/events",
		routeDoc({
			summary: "A run's timeline, oldest first, paged",
			responses: {
				200: answer("A page of events", "eventsAnswer"),
				400: refusal("A malformed run id, or a cursor this listing did not make"),
				404: NO_RUN,
			},
		}),
		runId,
		validated("query", eventsQuery),
		(c) =>
			paged(c, async () => {
				const { id } = c.req.valid("param");
				if (!(await deps.store.getRun(id))) return c.json({ error: "run not found" }, 404);
				const q = c.req.valid("query");
				const page = await deps.store.listEvents(id, q.limit, { cursor: q.cursor });
				return c.json({ events: page.items, nextCursor: page.nextCursor ?? null });
			}),
	);

	api.get(
		"/runs/:id/stream",
		routeDoc({
			summary: "A run, live, as Server-Sent Events",
			description:
				"Events: `run` (the run, as GET /api/runs/{id} answers, on connect and on every change), `timeline` (each new timeline event; its SSE id resumes a reconnect through Last-Event-ID), `end` (`{status}` once the run is finished; the stream closes). Behind a buffering gateway (AWS Lambda) each request answers with what is new and the client reconnects after `retry`.",
			query: streamQuery,
			headers: streamHeaders,
			responses: {
				200: { description: "The stream", mediaType: "text/event-stream" },
				400: refusal("A malformed run id or event id"),
				404: NO_RUN,
			},
		}),
		runId,
		async (c) => {
			const query = streamQuery.safeParse({
				after: c.req.query("after") ?? c.req.header("last-event-id") ?? undefined,
			});
			if (!query.success) return validationError(query, c) as Response;
			const run = await deps.store.getRun(c.req.valid("param").id);
			if (!run) return c.json({ error: "run not found" }, 404);
			return runStream(c, deps, run, query.data.after);
		},
	);

	api.post("/runs", routeDoc(startDoc()), startRequested(deps));

	api.post(
		"/runs/:id/cancel",
		routeDoc({
			summary: "Cancel a run: its tasks are stopped, the run ends cancelled",
			responses: {
				202: answer("Cancelling", "cancellingAnswer"),
				400: BAD_RUN_ID,
				404: NO_RUN,
				409: refusal("The run is already finished"),
			},
		}),
		runId,
		async (c) => {
			const run = await deps.store.getRun(c.req.valid("param").id);
			if (!run) return c.json({ error: "run not found" }, 404);
			if (isTerminalRun(run.status)) return c.json({ error: `run already ${run.status}` }, 409);
			await deps.queue.send(
				"events",
				cancelRequested({
					runId: run.runId,
					reason: "cancelled through the API",
					requestedAt: deps.now().toISOString(),
				}),
			);
			return c.json({ id: run.runId, status: "cancelling" }, 202);
		},
	);

	// Yes to spending more on a run paused at its cost limit (docs/cost.md › Cost and budgets).
	api.post(
		"/runs/:id/approve",
		routeDoc({
			summary:
				"Approve spending more on a run paused at its cost limit: it goes on up to the new limit",
			body: { schema: approveBody, required: false },
			responses: {
				202: answer("Approving; the run's new limit", "approvingAnswer"),
				400: refusal("A malformed run id, or a limit not above what the run spent"),
				404: NO_RUN,
				409: refusal("The run is not awaiting approval"),
			},
		}),
		runId,
		async (c) => {
			let raw: unknown = {};
			const text = await c.req.text();
			try {
				if (text.trim()) raw = JSON.parse(text);
			} catch {
				return c.json({ error: "body is not valid JSON" }, 400);
			}
			const parsed = approveBody.safeParse(raw);
			if (!parsed.success) return validationError(parsed, c) as Response;
			const run = await deps.store.getRun(c.req.valid("param").id);
			if (!run) return c.json({ error: "run not found" }, 404);
			const request = run.approval;
			if (run.status !== "awaiting_approval" || !request)
				return c.json({ error: `run is ${run.status}, not awaiting_approval` }, 409);
			const limitUsd = parsed.data.limitUsd ?? request.proposedLimitUsd;
			if (limitUsd <= request.spentUsd)
				return c.json(
					{
						error: `limitUsd must be more than the $${request.spentUsd.toFixed(2)} the run has spent`,
					},
					400,
				);
			await deps.queue.send(
				"events",
				approveRequested({
					runId: run.runId,
					limitUsd,
					by: "api",
					via: "api",
					requestedAt: request.requestedAt,
				}),
			);
			return c.json({ id: run.runId, status: "approving", limitUsd }, 202);
		},
	);

	api.post(
		"/runs/:id/retry",
		routeDoc({
			summary:
				"Start a new run for a finished run's issue; of an epic run, continue the epic (its plan and sub-issues kept, failed tasks restarted)",
			responses: {
				202: answer("The new run's id", "retriedAnswer"),
				400: BAD_RUN_ID,
				404: NO_RUN,
				409: refusal(
					"The run is still active, or is a follow-up round, an epic's task or an epic continued since",
				),
			},
		}),
		runId,
		async (c) => {
			const run = await deps.store.getRun(c.req.valid("param").id);
			if (!run) return c.json({ error: "run not found" }, 404);
			if (!isTerminalRun(run.status)) return c.json({ error: `run is still ${run.status}` }, 409);
			// A new run would start the issue over on the pull request's branch, over the rounds' commits.
			if (run.parentRunId)
				return c.json(
					{
						error: `run is a follow-up round of ${run.parentRunId}: ask again on its pull request (mention Lisa) instead`,
					},
					409,
				);
			// An epic continues from its newest run: an older one's state is stale (docs/epics.md › Epics).
			if (run.epic?.continuedBy)
				return c.json(
					{
						error: `epic run ${run.runId} was continued by run ${run.epic.continuedBy}: continue that one instead`,
					},
					409,
				);
			// A task's run alone would leave its epic waiting on the failed one (docs/epics.md › Epics).
			if (run.epicTask)
				return c.json(
					{
						error: `run is task ${run.epicTask.taskId} of epic run ${run.epicTask.runId}: continue the epic instead (npx lisa plan --continue ${run.epicTask.runId})`,
					},
					409,
				);
			const id = deps.newRunId();
			await deps.queue.send(
				"intake",
				requestAgain(run, {
					trigger: "retry",
					requestedAt: deps.now().toISOString(),
					runId: id,
					retryOf: run.runId,
					// An epic's retry continues it: its plan and sub-issues kept, its failed tasks restarted.
					...(run.epic ? { kind: "epic" as const } : {}),
				}),
			);
			return c.json({ id, retryOf: run.runId }, 202);
		},
	);

	/** The stats' window: whole UTC days by default (docs/http-api.md › Statistics). */
	const statsWindow = (q: { since?: string; until?: string }) => {
		const until = q.until ?? deps.now().toISOString();
		return { since: q.since ?? defaultSince(until), until };
	};

	api.get(
		"/stats",
		routeDoc({
			summary: "Counts, success rate, durations, time to PR and cost, per repo, provider and day",
			responses: {
				200: answer("Statistics of the runs created in the window", "statsAnswer"),
				400: refusal("A bad window"),
			},
		}),
		validated("query", statsQuery),
		async (c) => {
			const window = statsWindow(c.req.valid("query"));
			if (window.since >= window.until) return c.json({ error: "since must be before until" }, 400);
			const { stats, truncated } = await windowStats(
				deps.store,
				window.since,
				window.until,
				deps.now().toISOString(),
			);
			const { full: _full, ...answer } = stats;
			return c.json({
				window,
				truncated,
				...answer,
				medianDurationSeconds: stats.duration.medianSeconds,
			});
		},
	);

	// Counts the runs that finished before the stats kept days (idempotent: nothing counts twice).
	api.post(
		"/stats/rebuild",
		routeDoc({
			summary:
				"Count the runs of the window in the stats' days (those that finished before the days were kept)",
			responses: {
				200: answer("How many runs were read", "rebuiltAnswer"),
				400: refusal("A bad window"),
			},
		}),
		validated("query", statsQuery),
		async (c) => {
			const window = statsWindow(c.req.valid("query"));
			if (window.since >= window.until) return c.json({ error: "since must be before until" }, 400);
			const done = await rebuildDayStats(deps.store, window.since, window.until);
			return c.json({ window, ...done });
		},
	);

	api.route("/epics", epicsRoutes(deps));

	return api;
}
