import { readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as z from "zod";
import {
	eventsAnswer,
	runAnswer,
	runsAnswer,
	statsAnswer,
	whoamiAnswer,
} from "../../src/api/answers";
import { createApp } from "../../src/api/app";
import {
	DASHBOARD_JS,
	HTM_JS,
	PREACT_JS,
	UPLOT_CSS,
	UPLOT_JS,
	UPLOT_VERSION,
} from "../../src/api/assets";
import { newRun, newStep, type Run, type Step } from "../../src/domain/run";
import { isTerminalRun } from "../../src/domain/states";
import type { StepAttemptUsage } from "../../src/domain/usage";
import { collectSse } from "../support/sse";
import { createStackWorld, type StackWorld } from "../support/stack";
import { runStats } from "../support/stats";

// The runs API's contract (docs/http-api.md › HTTP API), over real HTTP against the local
// stack: every route, every error, paging, filters, statistics, the live stream, tokens and CORS.

const DASHBOARD_ORIGIN = "https://wall.acme.dev";

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({
		env: { LISA_CORS_ORIGINS: `${DASHBOARD_ORIGIN},https://grafana.acme.dev` },
	});
});
afterAll(() => w.stop());

const store = () => {
	if (!w.stack) throw new Error("no stack");
	return w.stack.deps.store;
};

/**
 * A run written straight into the store, counted in its day's stats once finished (as finalize
 * does): history to list and measure. `usd` is each step's model cost (null: unknown).
 */
async function seed(over: {
	at: string;
	status?: Run["status"];
	repos?: string[];
	issueKey?: string;
	minutesToPr?: number;
	provider?: string;
	usd?: number | null;
	/** The first step's pull request number (the next steps' follow). */
	pr?: number;
	merged?: boolean;
}): Promise<Run> {
	const created = Date.parse(over.at);
	const later = (min: number) => new Date(created + min * 60_000).toISOString();
	const status = over.status ?? "succeeded";
	const steps: Step[] = (over.repos ?? ["api"]).map((repo, i) => ({
		...newStep(i, repo),
		status: status === "succeeded" ? "succeeded" : status === "failed" ? "failed" : "cancelled",
		provider: over.provider ?? "claude",
		launchedAt: later(1),
		finishedAt: later(over.minutesToPr ?? 10),
		prUrl:
			status === "succeeded"
				? `https://github.com/acme/${repo}/pull/${(over.pr ?? 1) + i}`
				: undefined,
		...(over.usd !== undefined ? { usage: [spent(over.usd)] } : {}),
	}));
	const run: Run = {
		...newRun({
			runId: ulid(created),
			source: "linear",
			issueId: `seed-${ulid()}`,
			issueKey: over.issueKey,
			trigger: "webhook",
			now: over.at,
		}),
		status,
		steps,
		finishedAt: isTerminalRun(status) ? later((over.minutesToPr ?? 10) + 1) : undefined,
		closedPullRequests: over.merged
			? steps.flatMap((s) => (s.prUrl ? [{ url: s.prUrl, merged: true, at: later(60) }] : []))
			: undefined,
	};
	await store().createRun(run);
	if (isTerminalRun(status)) await store().countRun(run);
	return run;
}

/** An attempt whose agents cost `usd` (null: unknown), with a cent of compute. */
const spent = (usd: number | null): StepAttemptUsage => ({
	attempt: 1,
	runs: [],
	total: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0 },
	seconds: 120,
	cost: {
		modelUsd: usd,
		knownModelUsd: usd ?? 0,
		computeUsd: 0.01,
		...(usd === null ? { unknown: ["claude: no price"] } : {}),
	},
});

const auth = (token: string | undefined) => ({ authorization: `Bearer ${token}` });
const get = (p: string, token = w.stack?.apiToken, headers: Record<string, string> = {}) =>
	fetch(`${w.url()}${p}`, { headers: { ...auth(token), ...headers } });

async function json<S extends z.ZodType>(res: Response, schema: S): Promise<z.infer<S>> {
	expect(res.status).toBe(200);
	// Every answer is held to the schema the OpenAPI document is generated from.
	return schema.parse(await res.json());
}

describe("tokens", () => {
	it("lets the read-only token read and nothing else; the admin token does everything", async () => {
		const read = w.stack?.readToken;
		expect(read).toMatch(/^lisa_/);
		expect(read).not.toBe(w.stack?.apiToken);
		expect((await get("/api/runs", read)).status).toBe(200);
		expect((await get("/api/stats", read)).status).toBe(200);
		const run = await seed({ at: new Date().toISOString() });
		for (const [p, body] of [
			["/api/runs", JSON.stringify({ issue: "ENG-1" })],
			[`/api/runs/${run.runId}/retry`, ""],
			[`/api/runs/${run.runId}/cancel`, ""],
		] as const) {
			const res = await fetch(`${w.url()}${p}`, { method: "POST", body, headers: auth(read) });
			expect(res.status).toBe(403);
			expect(((await res.json()) as { error: string }).error).toMatch(/read-only/);
		}
		const refused = await get("/api/runs", `${read}x`);
		expect(refused.status).toBe(401);
		expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="lisa"');
		expect((await fetch(`${w.url()}/api/runs`)).status).toBe(401);
	});

	it("tells a page what its token may do, and nothing without a valid token", async () => {
		expect(await json(await get("/api/whoami"), whoamiAnswer)).toEqual({ role: "admin" });
		expect(await json(await get("/api/whoami", w.stack?.readToken), whoamiAnswer)).toEqual({
			role: "read",
		});
		// A token that is nearly the read one is not a reader.
		expect((await get("/api/whoami", `${w.stack?.readToken}x`)).status).toBe(401);
		expect((await fetch(`${w.url()}/api/whoami`)).status).toBe(401);
	});

	it("serves the OpenAPI document without a token, covering every /api route", async () => {
		const res = await fetch(`${w.url()}/api/openapi.json`);
		expect(res.status).toBe(200);
		const doc = (await res.json()) as {
			openapi: string;
			paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
		};
		expect(doc.openapi).toBe("3.1.0");
		if (!w.stack) throw new Error("no stack");
		const routes = createApp(w.stack.deps)
			.routes.filter((r) => r.path.startsWith("/api/") && r.method !== "ALL")
			.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
		const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
			Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
		);
		expect(new Set(documented)).toEqual(new Set(routes));
		const list = doc.paths["/api/runs"]?.get as unknown as { parameters: { name: string }[] };
		expect(list.parameters.map((p) => p.name)).toEqual([
			"status",
			"source",
			"repo",
			"issue",
			"since",
			"until",
			"limit",
			"cursor",
		]);
		expect(Object.keys(doc.paths["/api/runs"]?.post?.responses ?? {})).toEqual(
			expect.arrayContaining(["202", "400", "401", "403"]),
		);
	});
});

describe("the dashboard's libraries and modules", () => {
	it("are the packages' own files, at versioned paths, kept long, without a token", async () => {
		const require = createRequire(import.meta.url);
		// The path's version is the installed package's, the one package.json pins.
		const pkg = require("uplot/package.json") as { version: string };
		expect(UPLOT_VERSION).toBe(pkg.version);
		expect(
			(require("../../package.json") as { dependencies: Record<string, string> }).dependencies
				.uplot,
		).toBe(UPLOT_VERSION);
		for (const [path, file, type] of [
			[UPLOT_JS, "uplot/dist/uPlot.iife.min.js", "text/javascript"],
			[UPLOT_CSS, "uplot/dist/uPlot.min.css", "text/css"],
			[PREACT_JS, "preact", "text/javascript"],
		] as const) {
			const res = await fetch(`${w.url()}${path}`);
			expect(res.status).toBe(200);
			expect(res.headers.get("content-type")).toContain(type);
			expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
			expect(Buffer.from(await res.arrayBuffer())).toEqual(await readFile(require.resolve(file)));
		}
		// Another version, or a file beside them, is not served.
		expect((await fetch(`${w.url()}/assets/uplot-1.6.31.min.js`)).status).toBe(404);
		expect((await fetch(`${w.url()}/assets/uPlot.cjs.js`)).status).toBe(404);
		expect((await fetch(`${w.url()}/assets/..%2fpackage.json`)).status).toBe(404);
		expect((await fetch(`${w.url()}${HTM_JS}`)).headers.get("cache-control")).toBe(
			"public, max-age=31536000, immutable",
		);
	});

	it("serves the dashboard's modules as their files are, asked again each time: 304 while unchanged", async () => {
		const res = await fetch(`${w.url()}${DASHBOARD_JS}`);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
		expect(res.headers.get("cache-control")).toBe("no-cache");
		expect(await res.text()).toBe(
			await readFile(new URL("../../src/dashboard/main.js", import.meta.url), "utf8"),
		);
		const etag = res.headers.get("etag") ?? "";
		expect(etag).toMatch(/^"[\w-]+"$/);
		const again = await fetch(`${w.url()}${DASHBOARD_JS}`, { headers: { "if-none-match": etag } });
		expect([again.status, await again.text()]).toEqual([304, ""]);
		// Only the page's modules: not the sources beside them.
		for (const p of [
			"/js/dashboard/main.ts",
			"/js/domain/run.ts",
			"/js/api/app.ts",
			"/src/dashboard/main.js",
		])
			expect((await fetch(`${w.url()}${p}`)).status).toBe(404);
	});
});

describe("paths no route serves", () => {
	it("answer 404 whatever the token, the same answer with none, a bad one or a good one", async () => {
		for (const p of ["/api/nope", "/api/runs/x/y/z", "/api/", "/api/stats/nope"]) {
			const answers = await Promise.all(
				[undefined, "wrong", w.stack?.readToken, w.stack?.apiToken].map(async (token) => {
					const res = await fetch(`${w.url()}${p}`, token ? { headers: auth(token) } : {});
					return {
						status: res.status,
						auth: res.headers.get("www-authenticate"),
						body: await res.text(),
					};
				}),
			);
			for (const a of answers)
				expect(a).toEqual({ status: 404, auth: null, body: '{"error":"not found"}' });
		}
		// A path that is served still asks for the token first.
		expect((await fetch(`${w.url()}/api/runs/${ulid()}`)).status).toBe(401);
		expect((await fetch(`${w.url()}/api/runs/${ulid()}/events`)).status).toBe(401);
	});

	it("serves an icon at /favicon.ico without a token", async () => {
		const res = await fetch(`${w.url()}/favicon.ico`);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("image/x-icon");
		const bytes = new Uint8Array(await res.arrayBuffer());
		// An ICO header: reserved 0, type 1 (icon), one image of 16×16.
		expect([...bytes.subarray(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 16, 16]);
	});
});

describe("POST /api/runs", () => {
	const start = (body: unknown) =>
		w.api<{ error: string; issues?: string[] }>("/api/runs", {
			method: "POST",
			body: JSON.stringify(body),
		});

	it("refuses an issue that is not a string, saying to quote it", async () => {
		for (const [issue, type] of [
			[123, "a number"],
			[true, "a boolean"],
			[null, "null"],
			[["ENG-1"], "a list"],
			[{ id: "ENG-1" }, "an object"],
		] as const) {
			const res = await start({ issue });
			expect(res.status).toBe(400);
			expect(res.body.issues).toEqual([
				`issue: must be a string (an id, key or URL in quotes, e.g. "123"), not ${type}`,
			]);
		}
		expect((await start({})).body.issues).toEqual([
			"issue: issue is required: an id, key (ENG-123) or URL",
		]);
	});

	it("refuses at once with 503 while the config is broken, saying why; accepts again once fixed", async () => {
		const good = await readFile(w.configFile, "utf8");
		try {
			await writeFile(w.configFile, `${good}valdiate: [npm test]\n`);
			for (const body of [{ issue: "ENG-1", source: "github" }, { issue: "ENG-1" }]) {
				const res = await start(body);
				expect(res.status).toBe(503);
				expect(res.body.error).toBe(
					`the config ${w.configFile} is invalid: runs cannot start until it is fixed (npx lisa doctor)`,
				);
				expect(res.body.issues).toEqual([
					"valdiate: unknown key — fix: did you mean `repos[].validate`? (it belongs there, not here)",
				]);
			}
			await rm(w.configFile);
			const missing = await start({ issue: "ENG-1" });
			expect(missing).toEqual({
				status: 503,
				body: {
					error: `no config at ${w.configFile}: runs cannot start until there is one (npx lisa init)`,
				},
			});
		} finally {
			await writeFile(w.configFile, good);
		}
		// Fixed: the same request is judged on its own again (github is not the configured source).
		const fixed = await start({ issue: "ENG-1", source: "github" });
		expect(fixed).toEqual({
			status: 400,
			body: { error: "source github is not the configured source (linear)" },
		});
	});
});

describe("CORS for dashboard origins", () => {
	it("answers a configured origin's preflight without a token, and no other origin", async () => {
		const preflight = await fetch(`${w.url()}/api/runs`, {
			method: "OPTIONS",
			headers: {
				origin: DASHBOARD_ORIGIN,
				"access-control-request-method": "GET",
				"access-control-request-headers": "authorization",
			},
		});
		expect(preflight.status).toBe(204);
		expect(preflight.headers.get("access-control-allow-origin")).toBe(DASHBOARD_ORIGIN);
		expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain(
			"authorization",
		);
		const read = await get("/api/runs", w.stack?.readToken, { origin: DASHBOARD_ORIGIN });
		expect(read.headers.get("access-control-allow-origin")).toBe(DASHBOARD_ORIGIN);
		const other = await get("/api/runs", w.stack?.readToken, { origin: "https://evil.example" });
		expect(other.headers.get("access-control-allow-origin")).toBeNull();
	});
});

describe("GET /api/runs", () => {
	let seeded: Run[];
	beforeAll(async () => {
		seeded = [];
		// 45 runs over three days of 2025 in two repos, so pages, filters and windows are exact.
		for (let i = 0; i < 45; i++)
			seeded.push(
				await seed({
					at: new Date(Date.UTC(2025, 0, 10 + (i % 3), 8, i)).toISOString(),
					repos: i % 5 === 0 ? ["pager-api", "pager-web"] : [i % 2 ? "pager-api" : "pager-web"],
					issueKey: `PAGE-${i % 7}`,
					status: i % 4 === 0 ? "failed" : "succeeded",
				}),
			);
	});

	async function all(query: string, limit: number) {
		const ids: string[] = [];
		let cursor: string | null = null;
		let pages = 0;
		do {
			const page: z.infer<typeof runsAnswer> = await json(
				await get(`/api/runs?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`),
				runsAnswer,
			);
			expect(page.runs.length).toBeLessThanOrEqual(limit);
			ids.push(...page.runs.map((r) => r.id));
			cursor = page.nextCursor;
			pages++;
		} while (cursor && pages < 50);
		return { ids, pages };
	}

	const newestFirst = (runs: Run[]) =>
		runs
			.map((r) => r.runId)
			.sort()
			.reverse();

	it("pages through everything without loss or repetition, newest first", async () => {
		const window = "since=2025-01-10&until=2025-01-13";
		const { ids, pages } = await all(window, 10);
		expect(ids).toEqual(newestFirst(seeded));
		expect(pages).toBe(5);
		// Filtered reads page just as well (a filter thins the index pages it reads).
		const api = await all(`${window}&repo=pager-api`, 7);
		expect(api.ids).toEqual(
			newestFirst(seeded.filter((r) => r.steps.some((s) => s.repo === "pager-api"))),
		);
		const failed = await all(`${window}&status=failed`, 4);
		expect(failed.ids).toEqual(newestFirst(seeded.filter((r) => r.status === "failed")));
	});

	it("filters by status, source, repo, issue and creation time", async () => {
		const ids = async (q: string) =>
			(await json(await get(`/api/runs?limit=100&${q}`), runsAnswer)).runs.map((r) => r.id);
		const day11 = seeded.filter((r) => r.createdAt.startsWith("2025-01-11"));
		expect(await ids("since=2025-01-11&until=2025-01-12")).toEqual(newestFirst(day11));
		expect(
			await ids("since=2025-01-11T00:00:00Z&until=2025-01-12T00:00:00.000Z&status=failed"),
		).toEqual(newestFirst(day11.filter((r) => r.status === "failed")));
		expect(await ids("issue=PAGE-3&source=linear&since=2025-01-01")).toEqual(
			newestFirst(seeded.filter((r) => r.issueKey === "PAGE-3")),
		);
		expect(await ids("source=trello&since=2025-01-01&until=2025-02-01")).toEqual([]);
		const one = seeded[7] as Run;
		expect(await ids(`issue=${one.issueId}`)).toEqual([one.runId]);
	});

	it("pages a run's timeline, and answers 404 and 400 where it should", async () => {
		const run = seeded[3] as Run;
		for (let i = 0; i < 7; i++)
			await store().appendEvent(run.runId, { type: "agent.output", message: `n${i}` });
		const first = await json(await get(`/api/runs/${run.runId}/events?limit=4`), eventsAnswer);
		expect(first.nextCursor).not.toBeNull();
		const second = await json(
			await get(`/api/runs/${run.runId}/events?limit=4&cursor=${first.nextCursor}`),
			eventsAnswer,
		);
		expect([...first.events, ...second.events].map((e) => e.message)).toEqual(
			Array.from({ length: 7 }, (_, i) => `n${i}`),
		);
		expect(second.nextCursor).toBeNull();
		const unknown = ulid();
		expect((await get(`/api/runs/${unknown}/events`)).status).toBe(404);
		expect((await get(`/api/runs/${unknown}`)).status).toBe(404);
		// Not a run id at all: the request is wrong, whatever the store holds.
		expect((await get("/api/runs/NOPE/events")).status).toBe(400);
		expect((await get("/api/runs/NOPE")).status).toBe(400);
		expect((await get(`/api/runs/${run.runId}/events?cursor=!!`)).status).toBe(400);
		expect((await get(`/api/runs/${run.runId}/events?limit=-1`)).status).toBe(400);
	});

	it("shows each run's repos, provider, duration, PRs and links", async () => {
		const run = seeded[5] as Run;
		const view = await json(await get(`/api/runs/${run.runId}`), runAnswer);
		expect(view).toMatchObject({
			id: run.runId,
			status: "succeeded",
			repos: ["pager-api", "pager-web"],
			provider: "claude",
			durationSeconds: 11 * 60,
			prUrls: [
				"https://github.com/acme/pager-api/pull/1",
				"https://github.com/acme/pager-web/pull/2",
			],
			links: { stream: `/api/runs/${run.runId}/stream` },
		});
		expect(view).not.toHaveProperty("config");
		expect(view).not.toHaveProperty("issue");
	});

	it.each([
		["status=bogus", /status/],
		["limit=0", /limit/],
		["since=yesterday", /since: expected an ISO 8601 date-time with its zone/],
		["since=2025-02-01&until=2025-01-01", /since must be before until/],
		["cursor=bm90LWpzb24", /invalid cursor/],
	])("answers 400 to %s", async (q, message) => {
		const res = await get(`/api/runs?${q}`);
		expect(res.status).toBe(400);
		expect(JSON.stringify(await res.json())).toMatch(message);
	});
});

describe("GET /api/stats", () => {
	beforeAll(async () => {
		// March 2025: three runs of api (PRs after 10, 20 and 40 minutes), one failure in web.
		const at = (d: number) => new Date(Date.UTC(2025, 2, d, 9)).toISOString();
		await seed({ at: at(1), repos: ["stats-api"], minutesToPr: 10 });
		await seed({ at: at(2), repos: ["stats-api"], minutesToPr: 20, provider: "gemini" });
		await seed({ at: at(3), repos: ["stats-api"], minutesToPr: 40 });
		await seed({ at: at(4), repos: ["stats-web"], status: "failed", minutesToPr: 5 });
	});

	it("measures the runs created in the window, per repo and per provider", async () => {
		const s = await json(await get("/api/stats?since=2025-03-01&until=2025-04-01"), statsAnswer);
		expect(s.window).toEqual({
			since: "2025-03-01T00:00:00.000Z",
			until: "2025-04-01T00:00:00.000Z",
		});
		expect(s).toMatchObject({
			total: 4,
			truncated: false,
			counts: { succeeded: 3, failed: 1, running: 0 },
			successRate: 0.75,
			timeToPr: { medianSeconds: 20 * 60, p90Seconds: 40 * 60 },
			// Durations 6, 11, 21 and 41 minutes: the nearest-rank median is the second.
			medianDurationSeconds: 11 * 60,
		});
		expect(s.byRepo["stats-api"]).toMatchObject({ finished: 3, succeeded: 3, successRate: 1 });
		expect(s.byRepo["stats-web"]).toMatchObject({ finished: 1, failed: 1, successRate: 0 });
		expect(s.byProvider.gemini).toMatchObject({
			succeeded: 1,
			timeToPr: { medianSeconds: 20 * 60 },
		});
		expect(s.byProvider.claude).toMatchObject({ finished: 3, succeeded: 2, failed: 1 });
		expect(s.agentSeconds).toBe((9 + 19 + 39 + 4) * 60);
	});

	it("defaults to 30 whole UTC days and refuses a window that ends before it starts", async () => {
		const s = await json(await get("/api/stats"), statsAnswer);
		const today = Date.parse(s.window.until.slice(0, 10));
		expect(Date.parse(s.window.since)).toBe(today - 29 * 86_400_000);
		expect((await get("/api/stats?since=2025-04-01&until=2025-03-01")).status).toBe(400);
		expect((await get("/api/stats?until=soon")).status).toBe(400);
	});
});

describe("GET /api/stats over the days kept", () => {
	// June 2024: 260 runs over six days (three pages of /api/runs), some failed or cancelled, some
	// merged, priced and unpriced, and runs still active.
	const at = (day: number, minute: number) =>
		new Date(Date.UTC(2024, 5, day, Math.floor(minute / 60) % 24, minute % 60)).toISOString();
	beforeAll(async () => {
		const statuses = ["succeeded", "succeeded", "failed", "succeeded", "cancelled"] as const;
		for (let batch = 0; batch < 260; batch += 20)
			// Twenty at once: finishes of one day race for its item, and all count.
			await Promise.all(
				Array.from({ length: 20 }, (_, k) => {
					const i = batch + k;
					return seed({
						at: at(1 + (i % 6), i * 7),
						status: i % 97 === 5 ? "running" : statuses[i % 5],
						repos: i % 3 ? ["sum-api"] : ["sum-api", "sum-web"],
						provider: i % 4 ? "claude" : "codex",
						minutesToPr: 3 + (i % 40),
						usd: i % 53 === 7 ? null : 0.05 * (i % 11),
						pr: 1000 + i * 2,
						merged: i % 2 === 0,
					});
				}),
			);
	});

	/** The recount: every run of the window, read page by page, folded with the same functions. */
	async function recount(since: string, until: string) {
		const runs: Run[] = [];
		let cursor: string | undefined;
		let pages = 0;
		do {
			const page = await store().listRuns({ since, until, limit: 100, cursor });
			runs.push(...page.items);
			cursor = page.nextCursor;
			pages++;
		} while (cursor);
		const { full: _full, ...stats } = runStats(runs);
		return { stats: JSON.parse(JSON.stringify(stats)), pages, runs: runs.length };
	}

	it("stats sum correctly across pages of runs", async () => {
		for (const [since, until] of [
			["2024-06-01T00:00:00.000Z", "2024-06-07T00:00:00.000Z"],
			// Part days at both edges, recounted; the days between read whole.
			["2024-06-02T12:00:00.000Z", "2024-06-06T15:00:00.000Z"],
			["2024-06-03T08:00:00.000Z", "2024-06-03T20:00:00.000Z"],
		]) {
			const s = await json(await get(`/api/stats?since=${since}&until=${until}`), statsAnswer);
			const want = await recount(since as string, until as string);
			const { window, truncated, medianDurationSeconds, ...got } = s;
			expect(window).toEqual({ since, until });
			expect(truncated).toBe(false);
			expect(got).toEqual(want.stats);
			expect(medianDurationSeconds).toBe(want.stats.duration.medianSeconds);
		}
		const whole = await recount("2024-06-01T00:00:00.000Z", "2024-06-07T00:00:00.000Z");
		expect(whole.runs).toBe(260);
		expect(whole.pages).toBe(3);
		expect(whole.stats).toMatchObject({
			total: 260,
			counts: { running: 3 },
			cost: { totalUsd: null, unknownRuns: 5 },
		});
		expect(whole.stats.mergedPrs).toBeGreaterThan(50);
		expect(whole.stats.mostExpensive).toHaveLength(10);
		expect(Object.keys(whole.stats.byDay)).toHaveLength(6);
	});

	it("rebuilds the days of runs that finished before they were kept, counting nothing twice", async () => {
		const old = await store().createRun({
			...newRun({
				runId: ulid(Date.UTC(2024, 5, 20, 10)),
				source: "linear",
				issueId: "before-the-days",
				trigger: "webhook",
				now: "2024-06-20T10:00:00.000Z",
			}),
			status: "failed",
			finishedAt: "2024-06-20T10:05:00.000Z",
		});
		expect(old).toBe(true);
		const window = "since=2024-06-01&until=2024-07-01";
		const before = await json(await get(`/api/stats?${window}`), statsAnswer);
		expect(before.total).toBe(260);
		const rebuild = () =>
			fetch(`${w.url()}/api/stats/rebuild?${window}`, {
				method: "POST",
				headers: auth(w.stack?.apiToken),
			});
		for (let i = 0; i < 2; i++) {
			const res = await rebuild();
			expect(res.status).toBe(200);
			expect(await res.json()).toMatchObject({ runs: 261, truncated: false });
		}
		const after = await json(await get(`/api/stats?${window}`), statsAnswer);
		expect(after.total).toBe(261);
		expect(after.counts.failed).toBe(before.counts.failed + 1);
		expect(after.mergedPrs).toBe(before.mergedPrs);
		const read = await fetch(`${w.url()}/api/stats/rebuild`, {
			method: "POST",
			headers: auth(w.stack?.readToken),
		});
		expect(read.status).toBe(403);
	});
});

describe("a run, live", () => {
	it("streams the run and the timeline events that happen after the client connected", async () => {
		const issue = w.issue("Slow change", "lisa-fake: sleep=3");
		const { runId } = (await (await w.sendWebhook(w.createdWebhook(issue))).json()) as {
			runId: string;
		};
		// The id is known at once; the run exists once intake took the request (404 until then).
		await w.waitForRun(runId, () => true);
		const res = await get(`/api/runs/${runId}/stream`);
		const connected = new Date().toISOString();
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
		const messages = await collectSse(res, (m) => m.event === "end");
		const runs = messages
			.filter((m) => m.event === "run")
			.map((m) => runAnswer.parse(JSON.parse(m.data)));
		expect(runs[0]?.id).toBe(runId);
		expect(runs.map((r) => r.status)).toContain("running");
		expect(runs.at(-1)?.status).toBe("succeeded");
		const timeline = messages.filter((m) => m.event === "timeline");
		const types = timeline.map((m) => JSON.parse(m.data).type);
		expect(types).toContain("run.succeeded");
		// The agent worked for 3 s after the client connected: its events came through the stream.
		expect(timeline.some((m) => JSON.parse(m.data).at > connected)).toBe(true);
		expect(timeline.every((m) => m.id && JSON.parse(m.data).id === m.id)).toBe(true);
		expect(new Set(timeline.map((m) => m.id)).size).toBe(timeline.length);
		expect(JSON.parse(messages.at(-1)?.data ?? "{}")).toEqual({ status: "succeeded" });

		// A reconnect with Last-Event-ID resumes after that event: nothing lost, nothing repeated.
		const middle = timeline[Math.floor(timeline.length / 2)];
		const resumed = await collectSse(
			await get(`/api/runs/${runId}/stream`, w.stack?.readToken, {
				"last-event-id": middle?.id ?? "",
			}),
		);
		const rest = resumed.filter((m) => m.event === "timeline").map((m) => m.id);
		const all = (
			await json(await get(`/api/runs/${runId}/events?limit=500`), eventsAnswer)
		).events.map((e) => e.id);
		expect(rest).toEqual(all.slice(all.indexOf(middle?.id ?? "") + 1));
		expect(resumed.at(-1)?.event).toBe("end");
	});

	it("answers with what is there and ends where responses are buffered (Lambda)", async () => {
		if (!w.stack) throw new Error("no stack");
		const run = await seed({ at: new Date().toISOString(), status: "running" });
		await store().appendEvent(run.runId, { type: "agent.output", message: "hello" });
		const app = w.appWith({ liveStream: false });
		const res = await app.request(`/api/runs/${run.runId}/stream`, {
			headers: auth(w.stack.apiToken),
		});
		// collectSse returns when the response ends: no waiting for changes that may never come.
		const messages = await collectSse(res);
		expect(messages.map((m) => m.event)).toEqual(["run", "timeline"]);
	});

	it("answers 404 for an unknown run and 400 for a bad run or event id", async () => {
		expect((await get(`/api/runs/${ulid()}/stream`)).status).toBe(404);
		expect((await get("/api/runs/NOPE/stream")).status).toBe(400);
		const run = await seed({ at: new Date().toISOString() });
		expect(
			(await get(`/api/runs/${run.runId}/stream`, undefined, { "last-event-id": "x" })).status,
		).toBe(400);
		expect((await get(`/api/runs/${run.runId}/stream?after=nope`)).status).toBe(400);
	});
});

describe("actions", () => {
	it("cancels an active run (stopping its task) and retries a finished one", async () => {
		const issue = w.issue("Never finishes", "lisa-fake: sleep=60");
		const { runId } = (await (await w.sendWebhook(w.createdWebhook(issue))).json()) as {
			runId: string;
		};
		await w.waitForRun(runId, (r) => r.steps[0]?.status === "running");
		const retryActive = await w.api<{ error: string }>(`/api/runs/${runId}/retry`, {
			method: "POST",
		});
		expect(retryActive).toEqual({ status: 409, body: { error: "run is still running" } });
		const cancel = await w.api(`/api/runs/${runId}/cancel`, { method: "POST" });
		expect(cancel).toEqual({ status: 202, body: { id: runId, status: "cancelling" } });
		const cancelled = await w.waitForRun(runId, (r) => r.status === "cancelled");
		expect(cancelled.steps[0]?.status).toBe("cancelled");
		const again = await w.api<{ error: string }>(`/api/runs/${runId}/cancel`, { method: "POST" });
		expect(again).toEqual({ status: 409, body: { error: "run already cancelled" } });

		const retry = await w.api<{ id: string; retryOf: string }>(`/api/runs/${runId}/retry`, {
			method: "POST",
		});
		expect(retry.status).toBe(202);
		expect(retry.body.retryOf).toBe(runId);
		const second = await w.waitForRun(
			retry.body.id,
			(r) => r.status === "running" || r.status === "succeeded",
		);
		expect(second).toMatchObject({ trigger: "retry", issueId: issue.id });
		await w.api(`/api/runs/${retry.body.id}/cancel`, { method: "POST" });
		await w.waitForRun(retry.body.id, (r) => r.status === "cancelled");

		for (const action of ["cancel", "retry", "approve"]) {
			expect((await w.api(`/api/runs/${ulid()}/${action}`, { method: "POST" })).status).toBe(404);
			expect((await w.api(`/api/runs/NOPE/${action}`, { method: "POST" })).status).toBe(400);
		}
	});

	it("approves a run paused at its cost limit: a new limit above what it spent, admin only", async () => {
		if (!w.stack) throw new Error("no stack");
		const requestedAt = new Date().toISOString();
		const paused = await seed({ at: requestedAt, status: "running" });
		await store().updateRun(
			paused,
			{
				set: {
					status: "awaiting_approval",
					approval: {
						requestedAt,
						spentUsd: 5.02,
						limitUsd: 5,
						proposedLimitUsd: 15.02,
						steps: [0],
						resume: "running",
					},
				},
			},
			requestedAt,
		);
		const approve = (id: string, body?: unknown, token = w.stack?.apiToken) =>
			fetch(`${w.url()}/api/runs/${id}/approve`, {
				method: "POST",
				headers: auth(token),
				...(body === undefined ? {} : { body: JSON.stringify(body) }),
			});
		const answer = async (res: Response) => ({ status: res.status, body: await res.json() });

		expect(await answer(await approve(paused.runId, {}, w.stack.readToken))).toMatchObject({
			status: 403,
			body: { error: expect.stringMatching(/read-only/) },
		});
		expect(await answer(await approve(paused.runId, { limitUsd: 5 }))).toEqual({
			status: 400,
			body: { error: "limitUsd must be more than the $5.02 the run has spent" },
		});
		expect((await approve(paused.runId, { limitUsd: -1 })).status).toBe(400);
		expect((await approve(paused.runId, { limitUsd: 20, more: 1 })).status).toBe(400);
		const finished = await seed({ at: requestedAt });
		expect(await answer(await approve(finished.runId))).toEqual({
			status: 409,
			body: { error: "run is succeeded, not awaiting_approval" },
		});
		expect((await approve(ulid())).status).toBe(404);

		// The yes goes to the pipeline as a message on the events queue (an app whose queue is
		// recorded: the stack's own pipeline would take it at once).
		const sent: unknown[] = [];
		const app = createApp({
			...w.stack.deps,
			queue: {
				send: async (queue, message) => {
					sent.push({ queue, message });
				},
			},
		});
		const post = (body?: string) =>
			app.request(`/api/runs/${paused.runId}/approve`, {
				method: "POST",
				headers: auth(w.stack?.apiToken),
				...(body === undefined ? {} : { body }),
			});
		expect(await answer(await post(JSON.stringify({ limitUsd: 20 })))).toEqual({
			status: 202,
			body: { id: paused.runId, status: "approving", limitUsd: 20 },
		});
		// Without a limit: the one the request proposed.
		expect((await answer(await post())).body).toMatchObject({ limitUsd: 15.02 });
		const message = {
			type: "run.approve",
			runId: paused.runId,
			by: "api",
			via: "api",
			requestedAt,
		};
		expect(sent).toEqual([
			{ queue: "events", message: { ...message, limitUsd: 20 } },
			{ queue: "events", message: { ...message, limitUsd: 15.02 } },
		]);
		// The run shows what it waits for.
		const view = await json(await get(`/api/runs/${paused.runId}`), runAnswer);
		expect(view).toMatchObject({
			status: "awaiting_approval",
			approval: { spentUsd: 5.02, limitUsd: 5, proposedLimitUsd: 15.02 },
		});
	});
});
