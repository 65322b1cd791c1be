import type { Context } from "hono";
import { formatProblem } from "../config/schema";
import { requestRun } from "../pipeline/request";
import type { AuthEnv } from "./auth";
import type { ApiDeps } from "./deps";
import { answer, type RouteDoc, refusal } from "./route-doc";
import { startBody } from "./schemas";
import { validationError } from "./validation";

/** What POST /api/runs and POST /api/epics say of themselves in the OpenAPI document. */
export const startDoc = (kind?: "epic"): RouteDoc => ({
	summary: kind
		? "Start an epic for an issue: research, a plan of dependent tasks, a sub-issue and a run per task (docs/epics.md › Epics)"
		: "Start a run for an issue",
	body: { schema: startBody, required: true },
	responses: {
		202: kind
			? answer("Queued; the epic run's id", "startedEpicAnswer")
			: answer("Queued; the run's id", "startedAnswer"),
		400: refusal(
			"Not JSON, no issue, an issue that is not a string, over 512 characters or with spaces, or a source other than the configured one",
		),
		503: refusal("No config, or an invalid one (`issues` says what is wrong in it)"),
	},
});

/**
 * POST /api/runs and POST /api/epics (`kind: "epic"`, docs/epics.md › Epics): a run for the body's
 * issue, requested now; 202 with its id. The body is read as JSON whatever its Content-Type (`curl
 * -d` sends a form type).
 */
export const startRequested =
	(deps: ApiDeps, kind?: "epic") =>
	async (c: Context<AuthEnv>): Promise<Response> => {
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
		// A run needs the config (its repos, its tracker): refused now, not failed later. 503: the
		// request is fine, Lisa is not ready for it.
		if (state.status === "missing")
			return c.json(
				{
					error: `no config at ${state.file}: runs cannot start until there is one (npx lisa init)`,
				},
				503,
			);
		if (state.status === "invalid")
			return c.json(
				{
					error: `the config ${state.file} is invalid: runs cannot start until it is fixed (npx lisa doctor)`,
					issues: state.error.problems.map(formatProblem),
				},
				503,
			);
		const configured = state.config.source;
		if (body.source && body.source !== configured)
			return c.json(
				{ error: `source ${body.source} is not the configured source (${configured})` },
				400,
			);
		const id = await requestRun(deps, configured, { id: body.issue }, "api", kind);
		return c.json(kind ? { id, kind } : { id }, 202);
	};
