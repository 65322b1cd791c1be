import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import { githubWebhook } from "../integrations/github/webhook";
import { linearWebhook } from "../integrations/linear/webhook";
import { trelloWebhook } from "../integrations/trello/webhook";
import { assetRoutes } from "./assets";
import { bearerToken } from "./auth";
import { DASHBOARD_HTML } from "./dashboard";
import type { ApiDeps } from "./deps";
import { FAVICON } from "./favicon";
import { routeDoc } from "./route-doc";
import { runsRoutes } from "./runs";
import { signIn } from "./sign-in";

/** Largest webhook body accepted (Linear's and GitHub's payloads are far smaller). */
const MAX_WEBHOOK_BYTES = 1024 * 1024;
/** Largest /api/* body accepted: a run request is a few hundred bytes. */
const MAX_API_BYTES = 64 * 1024;

/**
 * Refuses a body over `max` bytes with 413 and a JSON error, before it is read. A declared length
 * is judged from the header alone: hono's bodyLimit reads `c.req.raw.body`, which makes the node
 * server build a whole Request (stream, abort signal) for every request instead of reading the
 * body straight from the socket. Only a body without a length (chunked) goes through bodyLimit,
 * which counts it as it is read.
 */
function bodyAtMost(max: number): MiddlewareHandler {
	// The unread rest of the body makes the connection unusable: tell the client to drop it.
	const tooLarge = (c: Context) =>
		c.json({ error: `body larger than ${max} bytes` }, 413, { connection: "close" });
	const counted = bodyLimit({ maxSize: max, onError: tooLarge });
	return async (c, next) => {
		if (c.req.method === "GET" || c.req.method === "HEAD") return next();
		const length = c.req.header("content-length");
		if (length === undefined || c.req.header("transfer-encoding") !== undefined)
			return counted(c, next);
		if (Number.parseInt(length, 10) > max) return tooLarge(c);
		return next();
	};
}

/**
 * 404 for a path no /api route serves, before the token is asked for: the same answer with any
 * token or none, so it tells nothing but that the path does not exist (the routes themselves are
 * public, in /api/openapi.json).
 */
function knownPaths(routes: Hono["routes"]): MiddlewareHandler {
	const patterns = routes
		.filter((r) => r.method !== "ALL")
		.map((r) => new RegExp(`^/api${r.path.replace(/:[^/]+/g, "[^/]+")}$`));
	return async (c, next) => {
		if (!patterns.some((p) => p.test(c.req.path))) return c.json({ error: "not found" }, 404);
		await next();
	};
}

/** The one Hono app: served by @hono/node-server locally and by hono/aws-lambda in AWS. */
export function createApp(deps: ApiDeps): Hono {
	const app = new Hono();
	app.use(secureHeaders());

	app.get("/healthz", (c) => c.json({ ok: true }));
	// The dashboard page carries no data; it reads the API with the token the user pastes.
	const dashboard = secureHeaders({
		contentSecurityPolicy: {
			defaultSrc: ["'self'"],
			scriptSrc: ["'self'"],
			// uPlot's stylesheet (/assets), and the inline styles it and the page set.
			styleSrc: ["'self'", "'unsafe-inline'"],
		},
	});
	app.get("/", dashboard, (c) => c.html(DASHBOARD_HTML));
	app.get("/runs/:id", dashboard, (c) => c.html(DASHBOARD_HTML));
	app.get("/favicon.ico", (c) =>
		c.body(FAVICON, 200, {
			"content-type": "image/x-icon",
			"cache-control": "public, max-age=86400",
		}),
	);
	// A printed link's one-time code for the read-only token (sign-in.ts); a code is a few dozen bytes.
	app.post("/dashboard/sign-in", bodyAtMost(1024), (c) => signIn(c, deps));
	// The dashboard's modules and libraries (assets.ts).
	assetRoutes(app);

	const webhooks = new Hono();
	webhooks.use(bodyAtMost(MAX_WEBHOOK_BYTES));
	webhooks.post("/linear", (c) => linearWebhook(c, deps));
	// Trello checks the callback URL with a HEAD (served by this GET route) before creating a webhook.
	webhooks.get("/trello", (c) => c.body(null, 200));
	webhooks.post("/trello", (c) => trelloWebhook(c, deps));
	webhooks.post("/github", (c) => githubWebhook(c, deps));
	app.route("/webhooks", webhooks);

	const { corsOrigins } = deps.settings;
	// Before the token check: a browser's preflight carries no Authorization header.
	if (corsOrigins.length)
		app.use(
			"/api/*",
			cors({
				origin: corsOrigins.includes("*") ? "*" : corsOrigins,
				allowMethods: ["GET", "POST", "OPTIONS"],
				allowHeaders: ["Authorization", "Content-Type", "Last-Event-ID"],
				maxAge: 600,
			}),
		);
	// Generated from the routes on the first request for it, by a module imported only then: no
	// cold start of the API loads the generator or converts a schema (src/api/openapi.ts).
	let openApi: Promise<string> | undefined;
	app.get(
		"/api/openapi.json",
		routeDoc({
			summary: "This document",
			public: true,
			responses: { 200: { description: "OpenAPI 3.1", mediaType: "application/json" } },
		}),
		async (c) => {
			openApi ??= import("./openapi")
				.then(({ openApiDocument }) => openApiDocument(app.routes, deps.settings.publicUrl))
				.then((doc) => JSON.stringify(doc))
				.catch((err) => {
					openApi = undefined;
					throw err;
				});
			return c.body(await openApi, 200, { "content-type": "application/json" });
		},
	);
	const api = runsRoutes(deps);
	app.use("/api/*", knownPaths(api.routes), bodyAtMost(MAX_API_BYTES));
	app.use("/api/*", bearerToken({ admin: deps.settings.apiToken, read: deps.settings.readToken }));
	app.route("/api", api);

	app.notFound((c) => c.json({ error: "not found" }, 404));
	app.onError((err, c) => {
		if (err instanceof HTTPException) return err.getResponse();
		deps.log.error({ err, path: c.req.path }, "request failed");
		return c.json({ error: "internal error" }, 500);
	});
	return app;
}
