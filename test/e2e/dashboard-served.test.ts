import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleLikeSst } from "../../bench/sst-esbuild";
import { LAMBDA_RUNTIME } from "../../infra/config";
import { runAnswer, runsAnswer, statsAnswer } from "../../src/api/answers";
import { createApp } from "../../src/api/app";
import { SERVED, UPLOT_CSS, UPLOT_JS } from "../../src/api/assets";
import type { ApiDeps } from "../../src/api/deps";
import { API_FILES } from "../../src/config/links";
import { stepNumber } from "../../src/domain/step-label";
import { hasChromium, launchChromium } from "../support/browser";
import { API_TOKEN, httpEvent } from "../support/lambda";

// The dashboard's modules and libraries are files the API reads from disk (src/api/assets.ts), found
// where the API was loaded from: the sources (here, and under tsx as the local stack runs), or the
// bundle SST deploys, beside which the deploy copies them (infra/api.ts: API_FILES, copied here as it
// does into a folder away from the sources). Each one's page and modules run here in Chromium
// against a canned API: a module the page loads that the deploy would not copy fails every build.

const ROOT = path.resolve(import.meta.dirname ?? ".", "../..");
// Served from localhost, an origin Chromium trusts (it warns about COOP elsewhere).
const ORIGIN = "http://localhost";
const PATHS = ["/", ...Object.keys(SERVED)];
/** The domain's module the dashboard shares with the server: its step numbering. */
const STEP_LABEL = "/js/domain/step-label.js";
const run = promisify(execFile);

interface Served {
	status: number;
	headers: Record<string, string>;
	body: string;
}
type Build = Record<string, Served>;

/** Runs `script` (an ES module) in a fresh Node process and parses the JSON it prints. */
async function inNode(script: string, args: string[] = [], env: Record<string, string> = {}) {
	const { stdout } = await run(process.execPath, [...args, "--input-type=module", "-e", script], {
		cwd: ROOT,
		env: {
			PATH: process.env.PATH,
			AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
			LOG_LEVEL: "silent",
			...env,
		},
	});
	return JSON.parse(stdout) as Build;
}

/** The app's routes need only these to be built. */
const deps = { settings: { corsOrigins: [], apiToken: API_TOKEN } };

async function fromSource(): Promise<Build> {
	const app = createApp(deps as unknown as ApiDeps);
	const out: Build = {};
	for (const p of PATHS) {
		const res = await app.request(p);
		out[p] = {
			status: res.status,
			headers: Object.fromEntries(res.headers),
			body: await res.text(),
		};
	}
	return out;
}

/** The local stack's way: `node --import tsx` from the sources. */
const underTsx = () =>
	inNode(
		`const { createApp } = await import("./src/api/app.ts");
		const app = createApp(${JSON.stringify(deps)});
		const out = {};
		for (const p of ${JSON.stringify(PATHS)}) {
			const res = await app.request(p);
			out[p] = { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
		}
		process.stdout.write(JSON.stringify(out));`,
		["--import", "tsx"],
	);

/** SST's way: the API function bundled for deploy, invoked with HTTP API events. */
async function bundled(dir: string): Promise<Build> {
	const { outfiles } = await bundleLikeSst(
		{ api: path.join(ROOT, "src/functions/api.ts") },
		dir,
		LAMBDA_RUNTIME,
	);
	// What infra/api.ts's copyFiles puts beside the bundle (the bundle's folder is its root here).
	const root = path.dirname(outfiles.api ?? "");
	for (const file of API_FILES) {
		await mkdir(path.dirname(path.join(root, file)), { recursive: true });
		await copyFile(path.join(ROOT, file), path.join(root, file));
	}
	return inNode(
		`const { handler } = await import(${JSON.stringify(pathToFileURL(outfiles.api ?? "").href)});
		const out = {};
		for (const [p, event] of ${JSON.stringify(PATHS.map((p) => [p, httpEvent("GET", p)]))}) {
			const r = await handler(event);
			const body = r.isBase64Encoded ? Buffer.from(r.body, "base64").toString() : r.body;
			out[p] = { status: r.statusCode, headers: r.headers, body };
		}
		process.stdout.write(JSON.stringify(out));`,
		[],
		{
			SST_RESOURCE_App: JSON.stringify({ name: "lisa", stage: "test" }),
			SST_RESOURCE_ApiToken: JSON.stringify({ value: API_TOKEN }),
		},
	);
}

// ── the canned API ──────────────────────────────────────────────────────────────────────────
const ID = "01JZ0000000000000000000000";
const AT = "2025-01-02T03:04:05.000Z";
const PR = "https://github.com/acme/api/pull/7";
const TITLE = `Render <img src=x onerror="document.title='pwned'"> safely`;
const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
const cost = {
	modelUsd: 1.5,
	computeUsd: 0.34,
	totalUsd: 1.84,
	knownUsd: 1.84,
	unknown: [],
	tokens: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
	agentSeconds: 60,
};
const theRun = runAnswer.parse({
	id: ID,
	runId: ID,
	source: "linear",
	issueId: "issue-1",
	issueKey: "ENG-1",
	title: TITLE,
	url: "https://linear.app/acme/issue/ENG-1",
	trigger: "webhook",
	status: "succeeded",
	steps: [
		{
			index: 0,
			repo: "*",
			kind: "plan",
			status: "succeeded",
			attempt: 1,
			provider: "claude",
			cost,
		},
		{ index: 1, repo: "api", status: "succeeded", attempt: 1, provider: "claude", prUrl: PR, cost },
		{ index: 2, repo: "web", status: "cancelled", attempt: 1, agentState: "in_progress", cost },
	],
	createdAt: AT,
	updatedAt: AT,
	finishedAt: AT,
	repos: ["api"],
	provider: "claude",
	durationSeconds: 75,
	usage,
	cost,
	limitUsd: 10,
	prUrls: [PR],
	followUps: [],
	pendingFollowUps: [],
	links: { dashboard: `${ORIGIN}/runs/${ID}`, events: "", stream: "" },
});
const group = {
	finished: 2,
	succeeded: 1,
	failed: 1,
	successRate: 0.5,
	timeToPr: { medianSeconds: 75, p90Seconds: 75 },
	agentSeconds: 60,
	cost: { totalUsd: 3, knownUsd: 3 },
};
const stats = statsAnswer.parse({
	window: { since: AT, until: AT },
	truncated: false,
	total: 3,
	counts: {
		queued: 0,
		planning: 0,
		running: 1,
		awaiting_approval: 0,
		succeeded: 1,
		failed: 1,
		cancelled: 0,
	},
	successRate: 0.5,
	medianDurationSeconds: 75,
	duration: { medianSeconds: 75, p90Seconds: 75 },
	timeToPr: { medianSeconds: 75, p90Seconds: 75 },
	agentSeconds: 60,
	cost: { totalUsd: 3, knownUsd: 3, modelUsd: 2.9, computeUsd: 0.1, unknownRuns: 0 },
	costPerSucceededRun: 1.25,
	costPerMergedPr: 3,
	mergedPrs: 1,
	failedSpendShare: 0.25,
	byRepo: { api: group },
	byProvider: { claude: group },
	byDay: {
		[AT.slice(0, 10)]: {
			runs: 3,
			succeeded: 1,
			failed: 1,
			cancelled: 0,
			successRate: 0.5,
			timeToPr: { medianSeconds: 75, p90Seconds: 75 },
			cost: group.cost,
		},
	},
	mostExpensive: [],
});
const events = [
	{
		id: "01JZ0000000000000000000001",
		at: AT,
		type: "agent.output",
		step: 1,
		message: "working… 1/1",
	},
	{
		id: "01JZ0000000000000000000003",
		at: AT,
		type: "step.succeeded",
		step: 1,
		message: "step 1 (api) succeeded",
	},
	{ id: "01JZ0000000000000000000004", at: AT, type: "run.succeeded", message: "done" },
];
const stream = [
	`event: run\ndata: ${JSON.stringify(theRun)}\nretry: 2000\n\n`,
	...events.map((e) => `id: ${e.id}\nevent: timeline\ndata: ${JSON.stringify(e)}\n\n`),
	`event: end\ndata: {"status":"succeeded"}\n\n`,
].join("");

const api: Record<string, { type: string; body: string }> = {
	"/api/stats": { type: "application/json", body: JSON.stringify(stats) },
	"/api/whoami": { type: "application/json", body: JSON.stringify({ role: "admin" }) },
	"/api/runs": {
		type: "application/json",
		body: JSON.stringify(runsAnswer.parse({ runs: [theRun], nextCursor: null })),
	},
	[`/api/runs/${ID}/stream`]: { type: "text/event-stream", body: stream },
};

let browser: Browser;
let dir: string;
const builds: Record<string, Build> = {};

beforeAll(async () => {
	if (!hasChromium) return;
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-dashboard-"));
	[builds.source, builds.tsx, builds.bundle] = await Promise.all([
		fromSource(),
		underTsx(),
		bundled(dir),
	]);
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
	if (dir) await rm(dir, { recursive: true, force: true });
});

/** A signed-in page of `build` at `at`, with every error the page reports. */
async function open(build: Build, at: string) {
	const page = await browser.newPage();
	const errors: string[] = [];
	const loaded: string[] = [];
	page.on("requestfinished", (r) => loaded.push(new URL(r.url()).pathname));
	page.on("pageerror", (e) => errors.push(e.message));
	// A CSP violation is reported on the console.
	page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
	await page.route("**/*", (route) => {
		const url = new URL(route.request().url());
		const canned = api[url.pathname];
		if (canned) return route.fulfill({ status: 200, contentType: canned.type, body: canned.body });
		const served = build[PATHS.includes(url.pathname) ? url.pathname : "/"];
		if (!served) return route.abort();
		return route.fulfill({ status: served.status, headers: served.headers, body: served.body });
	});
	await page.addInitScript(() => localStorage.setItem("lisaToken", "read-token"));
	await page.goto(`${ORIGIN}${at}`);
	return { page, errors, loaded };
}

describe.skipIf(!hasChromium)("the served dashboard", () => {
	it("is served the same way by every build: its modules and libraries as the files are", async () => {
		// Every build serves each file as it is on disk, the bundle from the files copied beside it.
		const files = Object.fromEntries(
			await Promise.all(
				Object.entries(SERVED).map(async ([url, { file }]) => [
					url,
					(await readFile(path.join(ROOT, file))).toString(),
				]),
			),
		);
		for (const [name, build] of Object.entries(builds)) {
			expect(build["/"]?.headers["content-security-policy"]).toContain("script-src 'self'");
			for (const [url, text] of Object.entries(files)) {
				const served = build[url];
				expect({ name, url, status: served?.status, same: served?.body === text }).toEqual({
					name,
					url,
					status: 200,
					same: true,
				});
				if (url !== UPLOT_CSS)
					expect(served?.headers["content-type"]).toBe("text/javascript; charset=utf-8");
			}
			expect(build[UPLOT_JS]?.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
			expect(build[STEP_LABEL]?.headers["cache-control"]).toBe("no-cache");
		}
		// The step numbering the page loads is the domain's own module, the server's.
		expect(SERVED[STEP_LABEL]?.file).toBe("src/domain/step-label.js");
		// uPlot as the package has it.
		const require = createRequire(import.meta.url);
		const uplot = await readFile(require.resolve("uplot/dist/uPlot.iife.min.js"));
		expect(builds.bundle?.[UPLOT_JS]?.body).toBe(uplot.toString());
		// And none of them is inside the API's bundle.
		const bundle = await readFile(path.join(dir, "api", "bundle.mjs"), "utf8");
		expect(bundle).not.toContain("Waiting for the run to start");
		expect(bundle).not.toContain("Charts unavailable");
	});

	for (const name of ["source", "tsx", "bundle"]) {
		it(`runs from the ${name} build: the runs list, the stats and a run's live page`, async () => {
			const build = builds[name] as Build;
			const list = await open(build, "/");
			const row = list.page.locator(`tr[data-run="${ID}"]`);
			await row.waitFor();
			expect(await row.locator(".badge").textContent()).toBe("succeeded");
			expect(await row.locator(".title").textContent()).toBe(TITLE);
			expect(await list.page.locator("img").count()).toBe(0);
			expect(await row.locator(`a[href="${PR}"]`).count()).toBe(1);
			expect(await row.locator(".cost").textContent()).toBe("$1.84");
			const stat = (label: string) =>
				list.page.locator(".stat", { hasText: label }).locator("b").textContent();
			await expect.poll(() => stat("active")).toBe("1");
			expect(await stat("success rate")).toBe("50%");
			expect(await stat("time to PR, median")).toBe("1m 15s");
			expect(await stat("cost, 30 days")).toBe("$3.00");
			expect(await stat("per successful run")).toBe("$1.25");
			expect(await stat("per merged PR")).toBe("$3.00");
			// The charts, drawn by the uPlot this build serves.
			await expect.poll(() => list.page.locator("#charts .chart canvas").count()).toBe(4);
			expect(list.errors).toEqual([]);
			await list.page.close();

			const one = await open(build, `/runs/${ID}`);
			await expect
				.poll(() => one.page.locator("#timeline").textContent())
				.toContain("run.succeeded");
			expect(await one.page.locator("#steps td:nth-child(3) .badge").allTextContents()).toEqual([
				"succeeded",
				"succeeded",
				"cancelled",
			]);
			// The dashboard's step numbers are src/domain/step-label.js's, the module the page loaded,
			// in the steps and the timeline.
			expect(one.loaded).toContain(STEP_LABEL);
			const steps = theRun.steps;
			expect(await one.page.locator("#steps td.step").allTextContents()).toEqual(
				steps.map((s) => stepNumber(steps, s.index)),
			);
			const stepped = one.page.locator("#timeline tr", { hasText: "step.succeeded" });
			expect(await stepped.locator("td").nth(2).textContent()).toBe(stepNumber(steps, 1));
			// The cancelled step's agent was in progress: stale once the step ended, so not shown.
			expect(await one.page.locator("#steps td.agent").allTextContents()).toEqual(["", "", ""]);
			expect(await one.page.locator("#output").textContent()).toBe("working… 1/1\n");
			expect(await one.page.locator("#retry").count()).toBe(1);
			expect(await one.page.locator("#cost").textContent()).toMatch(/^Cost \$1\.84 \(model/);
			expect(one.errors).toEqual([]);
			await one.page.close();
		});
	}
});
