import { Hono } from "hono";
import type { AuthEnv } from "./auth";
import type { ApiDeps } from "./deps";
import { epicView, notAnEpic } from "./epic-view";
import { answer, BAD_RUN_ID, refusal, routeDoc } from "./route-doc";
import { runPath } from "./schemas";
import { startDoc, startRequested } from "./start";
import { validated } from "./validation";

// /api/epics (docs/epics.md › Epics): start an epic run for an issue, and read an epic's task
// graph. Continuing one is POST /api/runs/:id/retry, which knows an epic run by its kind.

export function epicsRoutes(deps: ApiDeps): Hono<AuthEnv> {
	const api = new Hono<AuthEnv>();

	api.post("/", routeDoc(startDoc("epic")), startRequested(deps, "epic"));

	api.get(
		"/:id",
		routeDoc({
			summary: "An epic run's phase and task graph (no task bodies, no research text)",
			responses: {
				200: answer("The epic", "epicAnswer"),
				400: BAD_RUN_ID,
				404: refusal("No such run, or a run that is not an epic (the message says which)"),
			},
		}),
		validated("param", runPath),
		async (c) => {
			const run = await deps.store.getRun(c.req.valid("param").id);
			if (!run) return c.json({ error: "run not found" }, 404);
			if (!run.epic) return c.json({ error: notAnEpic(run) }, 404);
			return c.json(epicView(run));
		},
	);

	return api;
}
