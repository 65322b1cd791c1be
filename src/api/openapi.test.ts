import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { readSettings } from "../config/settings";
import { createApp } from "./app";
import type { ApiDeps } from "./deps";

// The OpenAPI document against the routes the app serves (docs/http-api.md › Routes): every route
// the app answers is in the document with its method, unless it is one of the pages, files and
// deliveries below (each with its reason); every operation in the document is a route the app
// answers; and the document is OpenAPI 3.1, as its published JSON Schema has it.

/** Routes the app serves that are no part of the API the document describes, and why. */
const NOT_API: [RegExp, string][] = [
	[/^GET \/healthz$/, "the liveness probe of a load balancer, not a client's API"],
	[/^GET \/(runs\/:id)?$/, "the dashboard's pages (HTML)"],
	[/^GET \/js\//, "the dashboard's browser modules, static files (src/api/assets.ts)"],
	[/^GET \/favicon\.ico$/, "a static file"],
	[/^GET \/assets\//, "the dashboard's libraries' files, static and versioned"],
	[
		/^POST \/dashboard\/sign-in$/,
		"the dashboard's sign-in (docs/dashboard.md › Signing in from a link)",
	],
	[
		/^(GET|POST) \/webhooks\//,
		"the trackers' deliveries: their own signed payloads (docs/trackers.md › Trackers)",
	],
];

type Operation = {
	summary?: string;
	parameters?: { name: string; in: string; required?: boolean }[];
	requestBody?: { required?: boolean; content: Record<string, unknown> };
	responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
	security?: unknown[];
};
type Document = {
	openapi: string;
	servers?: { url: string }[];
	security: unknown[];
	components: { securitySchemes: Record<string, unknown> };
	paths: Record<string, Record<string, Operation>>;
};

function app() {
	const settings = {
		...readSettings({}),
		apiToken: "admin-token",
		readToken: "read-token",
		publicUrl: "https://lisa.example",
	};
	return createApp({ settings, log: { error() {} } } as unknown as ApiDeps);
}

async function servedDocument(lisa = app()) {
	// Without a token: the document is public.
	const res = await lisa.request("/api/openapi.json");
	expect(res.status).toBe(200);
	expect(res.headers.get("content-type")).toBe("application/json");
	return (await res.json()) as Document;
}

/** `METHOD /path/:param` of every route the app answers (not its middleware). */
const served = (routes: { method: string; path: string }[]) => [
	...new Set(routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path}`)),
];

const operations = (doc: Document) =>
	Object.entries(doc.paths).flatMap(([path, ops]) =>
		Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
	);

describe("the OpenAPI document", () => {
	it("documents every API route the app serves, and no route it does not", async () => {
		const lisa = app();
		const doc = await servedDocument(lisa);
		const routes = served(lisa.routes);
		// Each exclusion names routes the app does serve.
		for (const [pattern, why] of NOT_API)
			expect(
				routes.some((r) => pattern.test(r)),
				`${pattern} (${why})`,
			).toBe(true);
		const api = routes
			.filter((r) => !NOT_API.some(([pattern]) => pattern.test(r)))
			.map((r) => r.replace(/:(\w+)/g, "{$1}"));
		const documented = operations(doc).map((o) => o.key);
		expect(new Set(documented)).toEqual(new Set(api));
		expect(api.every((r) => / \/api\//.test(r))).toBe(true);
	});

	it("is OpenAPI 3.1, as its JSON Schema has it", async () => {
		const doc = await servedDocument();
		expect(doc.openapi).toBe("3.1.0");
		const validator = new Validator();
		const result = await validator.validate(doc);
		expect(result.errors).toBeUndefined();
		expect(result.valid).toBe(true);
		expect(validator.version).toBe("3.1");
	});

	it("has the tokens, the server and what every route may answer", async () => {
		const doc = await servedDocument();
		expect(doc.servers).toEqual([{ url: "https://lisa.example" }]);
		expect(doc.components.securitySchemes).toEqual({ bearer: { type: "http", scheme: "bearer" } });
		expect(doc.security).toEqual([{ bearer: [] }]);
		for (const { key, op } of operations(doc)) {
			// Each route says what it does (its routeDoc), not only what it validates.
			expect(op.summary, key).toBeTruthy();
			// Each {param} of the path is a required path parameter.
			for (const [, name] of key.matchAll(/\{(\w+)\}/g))
				expect(op.parameters, key).toContainEqual(
					expect.objectContaining({ name, in: "path", required: true }),
				);
			if (key === "GET /api/openapi.json") {
				expect(op.security).toEqual([]);
				expect(Object.keys(op.responses)).toEqual(["200"]);
				continue;
			}
			const codes = Object.keys(op.responses);
			expect(codes, key).toContain("401");
			if (!key.startsWith("GET "))
				expect(codes, key).toEqual(expect.arrayContaining(["403", "413"]));
			// Every answer but the stream is JSON with its schema.
			for (const [code, answer] of Object.entries(op.responses))
				if (key !== "GET /api/runs/{id}/stream" || code !== "200")
					expect(answer.content?.["application/json"]?.schema, `${key} ${code}`).toBeDefined();
		}
	});

	it("has each route's parameters and bodies from the schemas it validates with", async () => {
		const { paths } = await servedDocument();
		const names = (op: Operation | undefined) => op?.parameters?.map((p) => `${p.in} ${p.name}`);
		expect(names(paths["/api/runs"]?.get)).toEqual(
			["status", "source", "repo", "issue", "since", "until", "limit", "cursor"].map(
				(n) => `query ${n}`,
			),
		);
		expect(names(paths["/api/runs/{id}/events"]?.get)).toEqual([
			"path id",
			"query limit",
			"query cursor",
		]);
		expect(names(paths["/api/runs/{id}/stream"]?.get)).toEqual([
			"path id",
			"query after",
			"header Last-Event-ID",
		]);
		expect(names(paths["/api/stats"]?.get)).toEqual(["query since", "query until"]);
		expect(names(paths["/api/stats/rebuild"]?.post)).toEqual(["query since", "query until"]);
		for (const path of ["/api/runs", "/api/epics"]) {
			const body = paths[path]?.post?.requestBody;
			expect(body?.required).toBe(true);
			expect(body?.content["application/json"]).toMatchObject({
				schema: { type: "object", required: ["issue"] },
			});
		}
		expect(paths["/api/runs/{id}/approve"]?.post?.requestBody?.required).toBe(false);
		expect(Object.keys(paths["/api/runs"]?.post?.responses ?? {})).toEqual([
			"202",
			"400",
			"401",
			"403",
			"413",
			"503",
		]);
	});

	it("is built once, on the first request for it", async () => {
		const lisa = app();
		const [a, b] = await Promise.all([
			lisa.request("/api/openapi.json"),
			lisa.request("/api/openapi.json"),
		]);
		expect(await a.text()).toBe(await b.text());
	});
});
