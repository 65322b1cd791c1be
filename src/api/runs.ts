import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { isTerminalRun } from "../domain/states";
import { approveRequested, cancelRequested, requestAgain } from "../queue/messages";
import { InvalidCursor } from "../store";
import type { AuthEnv } from "./auth";
import type { ApiDeps } from "./deps";
import { epicsRoutes } from "./epics";
import { runDetailView, runView } from "./run-view";
import { approveBody, eventsQuery, listQuery, runPath, statsQuery, streamQuery } from "./schemas";
import { startRequested } from "./start";
import { defaultSince, rebuildDayStats, windowStats } from "./stats";
import { runStream } from "./stream";
import { validationError } from "./validation";

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
	api.get("/whoami", (c) => c.json({ role: c.get("role") }));

	api.get("/runs", zValidator("query", listQuery, validationError), (c) =>
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
	const runId = zValidator("param", runPath, validationError);

	api.get("/runs/:id", runId, async (c) => {
		const run = await deps.store.getRun(c.req.valid("param").id);
		if (!run) return c.json({ error: "run not found" }, 404);
		return c.json(await runDetailView(run, deps));
	});

	api.get("/runs/:id/events", runId, zValidator("query", eventsQuery, validationError), (c) =>
		paged(c, async () => {
			const { id } = c.req.valid("param");
			if (!(await deps.store.getRun(id))) return c.json({ error: "run not found" }, 404);
			const q = c.req.valid("query");
			const page = await deps.store.listEvents(id, q.limit, { cursor: q.cursor });
			return c.json({ events: page.items, nextCursor: page.nextCursor ?? null });
		}),
	);

	api.get("/runs/:id/stream", runId, async (c) => {
		const query = streamQuery.safeParse({
			after: c.req.query("after") ?? c.req.header("last-event-id") ?? undefined,
		});
		if (!query.success) return validationError(query, c) as Response;
		const run = await deps.store.getRun(c.req.valid("param").id);
		if (!run) return c.json({ error: "run not found" }, 404);
		return runStream(c, deps, run, query.data.after);
	});

	api.post("/runs", startRequested(deps));

	api.post("/runs/:id/cancel", runId, async (c) => {
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
	});

	// Yes to spending more on a run paused at its cost limit (docs/cost.md › Cost and budgets).
	api.post("/runs/:id/approve", runId, async (c) => {
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
	});

	api.post("/runs/:id/retry", runId, async (c) => {
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
	});

	/** The stats' window: whole UTC days by default (docs/http-api.md › Statistics). */
	const statsWindow = (q: { since?: string; until?: string }) => {
		const until = q.until ?? deps.now().toISOString();
		return { since: q.since ?? defaultSince(until), until };
	};

	api.get("/stats", zValidator("query", statsQuery, validationError), async (c) => {
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
	});

	// Counts the runs that finished before the stats kept days (idempotent: nothing counts twice).
	api.post("/stats/rebuild", zValidator("query", statsQuery, validationError), async (c) => {
		const window = statsWindow(c.req.valid("query"));
		if (window.since >= window.until) return c.json({ error: "since must be before until" }, 400);
		const done = await rebuildDayStats(deps.store, window.since, window.until);
		return c.json({ window, ...done });
	});

	api.route("/epics", epicsRoutes(deps));

	return api;
}
