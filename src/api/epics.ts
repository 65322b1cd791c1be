import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AuthEnv } from "./auth";
import type { ApiDeps } from "./deps";
import { epicView, notAnEpic } from "./epic-view";
import { runPath } from "./schemas";
import { startRequested } from "./start";
import { validationError } from "./validation";

// /api/epics (docs/epics.md › Epics): start an epic run for an issue, and read an epic's task
// graph. Continuing one is POST /api/runs/:id/retry, which knows an epic run by its kind.

export function epicsRoutes(deps: ApiDeps): Hono<AuthEnv> {
	const api = new Hono<AuthEnv>();

	api.post("/", startRequested(deps, "epic"));

	api.get("/:id", zValidator("param", runPath, validationError), async (c) => {
		const run = await deps.store.getRun(c.req.valid("param").id);
		if (!run) return c.json({ error: "run not found" }, 404);
		if (!run.epic) return c.json({ error: notAnEpic(run) }, 404);
		return c.json(epicView(run));
	});

	return api;
}
