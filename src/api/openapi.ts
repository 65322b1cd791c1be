import {
	OpenAPIRegistry,
	OpenApiGeneratorV31,
	type ResponseConfig,
	type RouteConfig,
} from "@asteasolutions/zod-to-openapi";
import type { Hono } from "hono";
import { findTargetHandler } from "hono/utils/handler";
import * as answers from "./answers";
import { type Answer, type Marked, ROUTE_DOC, refusal } from "./route-doc";

// The OpenAPI 3.1 document of /api/*, generated from the routes the app serves: each route's mark
// (route-doc.ts: its summary, its answers, what its handler reads itself) and its validators'
// zod schemas (validation.ts), turned into paths, parameters, bodies and answers by
// @asteasolutions/zod-to-openapi. Written here: the document's info, the token (its security
// scheme), and the answers of the middleware in front of every /api route. Only app.ts imports
// this module, and only on the first GET /api/openapi.json (`await import`): a cold start loads
// none of it.

type Route = Hono["routes"][number];
type Method = RouteConfig["method"];

const INFO = {
	title: "Lisa API",
	version: "1",
	description:
		"Runs of Lisa, the autonomous issue resolver: list and follow them, start, cancel and retry them, start epics and follow their tasks, and read their statistics. Every route takes `Authorization: Bearer <token>`: the admin token (LISA_API_TOKEN) for everything, the read-only token (LISA_READ_TOKEN) for GET.",
};

/** The answers of the token check (auth.ts) and the body limit (app.ts) in front of /api/*. */
function middlewareAnswers(method: string): Record<number, Answer> {
	const denied = refusal("No, a malformed or an unknown bearer token");
	if (method === "GET") return { 401: denied };
	return {
		401: denied,
		403: refusal("The read-only token may not do this"),
		413: refusal("A body larger than 64 KiB"),
	};
}

const response = ({ description, schema, mediaType }: Answer): ResponseConfig => ({
	description,
	content: schema
		? // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the document names every answer; the module comes with it, never with the API's cold start.
			{ "application/json": { schema: answers[schema] } }
		: mediaType
			? { [mediaType]: {} }
			: undefined,
});

/** Each marked route's operation, gathered from its marks (a route has a mark and its validators'). */
function operations(routes: readonly Route[]): RouteConfig[] {
	const byRoute = new Map<string, RouteConfig>();
	for (const route of routes) {
		const mark = (findTargetHandler(route.handler) as Marked)[ROUTE_DOC];
		if (!mark) continue;
		const key = `${route.method} ${route.path}`;
		const op = byRoute.get(key) ?? {
			method: route.method.toLowerCase() as Method,
			path: route.path.replace(/:(\w+)/g, "{$1}"),
			request: {},
			responses: {},
		};
		byRoute.set(key, op);
		const request = op.request ?? {};
		if ("target" in mark) {
			request[mark.target === "param" ? "params" : "query"] = mark.schema;
			continue;
		}
		op.summary = mark.summary;
		op.description = mark.description;
		if (mark.public) op.security = [];
		if (mark.query) request.query = mark.query;
		if (mark.headers) request.headers = mark.headers;
		if (mark.body)
			request.body = {
				required: mark.body.required,
				content: { "application/json": { schema: mark.body.schema } },
			};
		const answers = { ...mark.responses, ...(mark.public ? {} : middlewareAnswers(route.method)) };
		for (const [status, answer] of Object.entries(answers)) op.responses[status] = response(answer);
	}
	return [...byRoute.values()];
}

/** The document of the routes marked among `routes` (the app's). */
export function openApiDocument(routes: readonly Route[], serverUrl?: string) {
	const registry = new OpenAPIRegistry();
	registry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
	for (const op of operations(routes)) registry.registerPath(op);
	return new OpenApiGeneratorV31(registry.definitions).generateDocument({
		openapi: "3.1.0",
		info: INFO,
		servers: serverUrl ? [{ url: serverUrl }] : undefined,
		security: [{ bearer: [] }],
	});
}
