import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { z } from "zod";
import { SOURCES } from "../config/schema";
import { prUrls, type Run } from "../domain/run";
import { isTerminalRun, RUN_STATUSES } from "../domain/states";
import { InvalidCursor } from "../store/dynamo";
import type { ApiDeps } from "./deps";

const listQuery = z.object({
	status: z.enum(RUN_STATUSES).optional(),
	source: z.enum(SOURCES).optional(),
	limit: z.coerce
		.number()
		.int()
		.min(1)
		.default(20)
		.transform((n) => Math.min(n, 100)),
	cursor: z.string().optional(),
});

const pageQuery = z.object({
	limit: z.coerce
		.number()
		.int()
		.min(1)
		.default(100)
		.transform((n) => Math.min(n, 500)),
	cursor: z.string().optional(),
});

const startBody = z.object({
	source: z.enum(SOURCES).optional(),
	issue: z
		.union([z.string(), z.number()], { error: "issue is required: an id, key (ENG-123) or URL" })
		.transform((v) => String(v).trim())
		.pipe(z.string().min(1, "issue is required: an id, key (ENG-123) or URL")),
});

/** What the API shows of a run: no config snapshot, no issue text. */
export function runView(run: Run, deps: Pick<ApiDeps, "runUrl">) {
	const { config: _config, issue: _issue, version: _version, ...rest } = run;
	return {
		id: run.runId,
		...rest,
		prUrls: prUrls(run),
		links: { dashboard: deps.runUrl(run.runId), events: `/api/runs/${run.runId}/events` },
	};
}

const validationError = (
	result: { success: boolean; error?: unknown },
	c: { json: (b: unknown, s: 400) => Response },
) => {
	if (!result.success)
		return c.json(
			{
				error: "invalid request",
				issues: (result.error as z.ZodError).issues.map(
					(i) => `${i.path.join(".") || "body"}: ${i.message}`,
				),
			},
			400,
		);
};

export function runsRoutes(deps: ApiDeps): Hono {
	const api = new Hono();

	api.get("/runs", zValidator("query", listQuery, validationError), async (c) => {
		const q = c.req.valid("query");
		try {
			const page = await deps.store.listRuns(q);
			return c.json({
				runs: page.items.map((r) => runView(r, deps)),
				nextCursor: page.nextCursor ?? null,
			});
		} catch (err) {
			if (err instanceof InvalidCursor) return c.json({ error: "invalid cursor" }, 400);
			throw err;
		}
	});

	api.get("/runs/:id", async (c) => {
		const run = await deps.store.getRun(c.req.param("id"));
		if (!run) return c.json({ error: "run not found" }, 404);
		return c.json(runView(run, deps));
	});

	api.get("/runs/:id/events", zValidator("query", pageQuery, validationError), async (c) => {
		const id = c.req.param("id");
		if (!(await deps.store.getRun(id))) return c.json({ error: "run not found" }, 404);
		const q = c.req.valid("query");
		try {
			const page = await deps.store.listEvents(id, q.limit, q.cursor);
			return c.json({ events: page.items, nextCursor: page.nextCursor ?? null });
		} catch (err) {
			if (err instanceof InvalidCursor) return c.json({ error: "invalid cursor" }, 400);
			throw err;
		}
	});

	// The body is read as JSON whatever its Content-Type (`curl -d` sends a form type).
	api.post("/runs", async (c) => {
		let raw: unknown;
		try {
			raw = JSON.parse(await c.req.text());
		} catch {
			return c.json({ error: "body is not valid JSON" }, 400);
		}
		const parsed = startBody.safeParse(raw);
		if (!parsed.success) return validationError(parsed, c) as Response;
		const body = parsed.data;
		const state = deps.config();
		const configured = state.status === "ok" ? state.config.source : undefined;
		if (body.source && configured && body.source !== configured)
			return c.json(
				{ error: `source ${body.source} is not the configured source (${configured})` },
				400,
			);
		const source = body.source ?? configured;
		if (!source)
			return c.json(
				{ error: `no source given and no usable config (${state.status} ${state.file})` },
				400,
			);
		const id = deps.newRunId();
		await deps.queue.send("intake", {
			type: "run.requested",
			source,
			issueId: body.issue,
			trigger: "api",
			requestedAt: deps.now().toISOString(),
			runId: id,
		});
		return c.json({ id }, 202);
	});

	api.post("/runs/:id/cancel", async (c) => {
		const run = await deps.store.getRun(c.req.param("id"));
		if (!run) return c.json({ error: "run not found" }, 404);
		if (isTerminalRun(run.status)) return c.json({ error: `run already ${run.status}` }, 409);
		await deps.queue.send("events", {
			type: "run.cancel",
			runId: run.runId,
			reason: "cancelled through the API",
			requestedAt: deps.now().toISOString(),
		});
		return c.json({ id: run.runId, status: "cancelling" }, 202);
	});

	api.post("/runs/:id/retry", async (c) => {
		const run = await deps.store.getRun(c.req.param("id"));
		if (!run) return c.json({ error: "run not found" }, 404);
		if (!isTerminalRun(run.status)) return c.json({ error: `run is still ${run.status}` }, 409);
		const id = deps.newRunId();
		await deps.queue.send("intake", {
			type: "run.requested",
			source: run.source,
			issueId: run.issueId,
			issueKey: run.issueKey,
			trigger: "retry",
			requestedAt: deps.now().toISOString(),
			runId: id,
			retryOf: run.runId,
		});
		return c.json({ id, retryOf: run.runId }, 202);
	});

	api.get("/stats", async (c) => {
		const counts = await deps.store.countByStatus();
		const finished = counts.succeeded + counts.failed;
		const recent = [
			...(await deps.store.listRuns({ status: "succeeded", limit: 100 })).items,
			...(await deps.store.listRuns({ status: "failed", limit: 100 })).items,
		];
		const durations = recent
			.filter((r) => r.finishedAt)
			.map((r) => (Date.parse(r.finishedAt as string) - Date.parse(r.createdAt)) / 1000)
			.sort((a, b) => a - b);
		const median = durations.length
			? (durations[Math.floor((durations.length - 1) / 2)] ?? null)
			: null;
		return c.json({
			counts,
			total: Object.values(counts).reduce((a, b) => a + b, 0),
			successRate: finished ? counts.succeeded / finished : null,
			medianDurationSeconds: median,
		});
	});

	return api;
}
