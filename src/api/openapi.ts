import * as z from "zod";
import {
	approveBody,
	approvingAnswer,
	cancellingAnswer,
	epicAnswer,
	errorAnswer,
	eventsAnswer,
	eventsQuery,
	listQuery,
	rebuiltAnswer,
	retriedAnswer,
	runAnswer,
	runPath,
	runsAnswer,
	startBody,
	startedAnswer,
	startedEpicAnswer,
	statsAnswer,
	statsQuery,
	streamQuery,
	whoamiAnswer,
} from "./schemas";

// The OpenAPI 3.1 document of /api/*, generated from the same zod schemas the routes validate with.

type Schema = z.ZodType;

const json = (schema: Schema, io: "input" | "output" = "output") =>
	z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;

function queryParameters(schema: z.ZodObject) {
	return Object.entries(schema.shape).map(([name, field]) => {
		const { $schema: _, description, ...rest } = json(field as Schema, "input");
		return { name, in: "query", required: false, description, schema: rest };
	});
}

const answer = (description: string, schema: Schema) => ({
	description,
	content: { "application/json": { schema: json(schema) } },
});
const error = (description: string) => answer(description, errorAnswer);

/** Built when asked for (GET /openapi.json), never on import: a webhook's cold start needs none of it. */
export function openApiDocument(serverUrl?: string) {
	const { $schema: _, ...runIdJson } = json(runPath.shape.id, "input");
	const runId = { name: "id", in: "path", required: true, schema: runIdJson };
	const badRunId = error("A malformed run id (not a ULID)");
	const tooLarge = error("A body larger than 64 KiB");
	const denied = {
		401: error("No, a malformed or an unknown bearer token"),
	};
	const adminOnly = { ...denied, 403: error("The read-only token may not do this") };
	return {
		openapi: "3.1.0",
		info: {
			title: "Lisa API",
			version: "1",
			description:
				"Runs of Lisa, the autonomous issue resolver: list and follow them, start, cancel and retry them, start epics and follow their tasks, and read their statistics. Every route takes `Authorization: Bearer <token>`: the admin token (LISA_API_TOKEN) for everything, the read-only token (LISA_READ_TOKEN) for GET.",
		},
		servers: serverUrl ? [{ url: serverUrl }] : undefined,
		security: [{ bearer: [] }],
		components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
		paths: {
			"/api/runs": {
				get: {
					summary: "Runs, newest first, filtered and paged",
					parameters: queryParameters(listQuery),
					responses: {
						200: answer("A page of runs; `nextCursor` is null on the last", runsAnswer),
						400: error("A bad filter, or a cursor this listing did not make"),
						...denied,
					},
				},
				post: {
					summary: "Start a run for an issue",
					requestBody: {
						required: true,
						content: { "application/json": { schema: json(startBody, "input") } },
					},
					responses: {
						202: answer("Queued; the run's id", startedAnswer),
						400: error(
							"Not JSON, no issue, an issue that is not a string, over 512 characters or with spaces, or a source other than the configured one",
						),
						413: tooLarge,
						503: error("No config, or an invalid one (`issues` says what is wrong in it)"),
						...adminOnly,
					},
				},
			},
			"/api/runs/{id}": {
				get: {
					summary: "A run with its steps",
					parameters: [runId],
					responses: {
						200: answer("The run", runAnswer),
						400: badRunId,
						404: error("No such run"),
						...denied,
					},
				},
			},
			"/api/runs/{id}/events": {
				get: {
					summary: "A run's timeline, oldest first, paged",
					parameters: [runId, ...queryParameters(eventsQuery)],
					responses: {
						200: answer("A page of events", eventsAnswer),
						400: error("A malformed run id, or a cursor this listing did not make"),
						404: error("No such run"),
						...denied,
					},
				},
			},
			"/api/runs/{id}/stream": {
				get: {
					summary: "A run, live, as Server-Sent Events",
					description:
						"Events: `run` (the run, as GET /api/runs/{id} answers, on connect and on every change), `timeline` (each new timeline event; its SSE id resumes a reconnect through Last-Event-ID), `end` (`{status}` once the run is finished; the stream closes). Behind a buffering gateway (AWS Lambda) each request answers with what is new and the client reconnects after `retry`.",
					parameters: [
						runId,
						...queryParameters(streamQuery),
						{ name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" } },
					],
					responses: {
						200: { description: "The stream", content: { "text/event-stream": {} } },
						400: error("A malformed run id or event id"),
						404: error("No such run"),
						...denied,
					},
				},
			},
			"/api/runs/{id}/cancel": {
				post: {
					summary: "Cancel a run: its tasks are stopped, the run ends cancelled",
					parameters: [runId],
					responses: {
						202: answer("Cancelling", cancellingAnswer),
						400: badRunId,
						404: error("No such run"),
						409: error("The run is already finished"),
						413: tooLarge,
						...adminOnly,
					},
				},
			},
			"/api/runs/{id}/approve": {
				post: {
					summary:
						"Approve spending more on a run paused at its cost limit: it goes on up to the new limit",
					parameters: [runId],
					requestBody: {
						required: false,
						content: { "application/json": { schema: json(approveBody, "input") } },
					},
					responses: {
						202: answer("Approving; the run's new limit", approvingAnswer),
						400: error("A malformed run id, or a limit not above what the run spent"),
						404: error("No such run"),
						409: error("The run is not awaiting approval"),
						413: tooLarge,
						...adminOnly,
					},
				},
			},
			"/api/runs/{id}/retry": {
				post: {
					summary:
						"Start a new run for a finished run's issue; of an epic run, continue the epic (its plan and sub-issues kept, failed tasks restarted)",
					parameters: [runId],
					responses: {
						202: answer("The new run's id", retriedAnswer),
						400: badRunId,
						404: error("No such run"),
						409: error("The run is still active"),
						413: tooLarge,
						...adminOnly,
					},
				},
			},
			"/api/epics": {
				post: {
					summary:
						"Start an epic for an issue: research, a plan of dependent tasks, a sub-issue and a run per task (docs/epics.md › Epics)",
					requestBody: {
						required: true,
						content: { "application/json": { schema: json(startBody, "input") } },
					},
					responses: {
						202: answer("Queued; the epic run's id", startedEpicAnswer),
						400: error(
							"Not JSON, no issue, an issue that is not a string, over 512 characters or with spaces, or a source other than the configured one",
						),
						413: tooLarge,
						503: error("No config, or an invalid one (`issues` says what is wrong in it)"),
						...adminOnly,
					},
				},
			},
			"/api/epics/{id}": {
				get: {
					summary: "An epic run's phase and task graph (no task bodies, no research text)",
					parameters: [runId],
					responses: {
						200: answer("The epic", epicAnswer),
						400: badRunId,
						404: error("No such run, or a run that is not an epic (the message says which)"),
						...denied,
					},
				},
			},
			"/api/stats": {
				get: {
					summary:
						"Counts, success rate, durations, time to PR and cost, per repo, provider and day",
					parameters: queryParameters(statsQuery),
					responses: {
						200: answer("Statistics of the runs created in the window", statsAnswer),
						400: error("A bad window"),
						...denied,
					},
				},
			},
			"/api/stats/rebuild": {
				post: {
					summary:
						"Count the runs of the window in the stats' days (those that finished before the days were kept)",
					parameters: queryParameters(statsQuery),
					responses: {
						200: answer("How many runs were read", rebuiltAnswer),
						400: error("A bad window"),
						...adminOnly,
					},
				},
			},
			"/api/whoami": {
				get: {
					summary: "What the token presented may do",
					responses: { 200: answer("The token's role", whoamiAnswer), ...denied },
				},
			},
			"/api/openapi.json": {
				get: {
					summary: "This document",
					security: [],
					responses: { 200: { description: "OpenAPI 3.1" } },
				},
			},
		},
	};
}
