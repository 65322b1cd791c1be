import { mkdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRun, newStep, planStep, type Run, type Step } from "../../src/domain/run";
import { isTerminalRun, type RunStatus } from "../../src/domain/states";
import { stepLabel, stepNumber } from "../../src/domain/step-label";
import { hasChromium, launchChromium } from "../support/browser";
import { createStackWorld, type StackWorld } from "../support/stack";

// The dashboard as it is watched (docs/dashboard.md › Dashboard): a run's page updating in place
// while the run goes on, the notices of actions, the wall view and the charts — in Chromium,
// against the stack.
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));
/** The domain's step numbering, as the dashboard loads it (src/api/assets.ts). */
const STEP_LABEL = "/js/domain/step-label.js";

let w: StackWorld;
let browser: Browser;
const store = () => {
	const s = w.stack?.deps.store;
	if (!s) throw new Error("no stack");
	return s;
};

/** A run written as the pipeline leaves it, `ago` seconds old: what the page is then shown. */
async function seeded(
	status: RunStatus,
	steps: Step[],
	ago = 95,
	title = "Watch me",
	more: Partial<Run> = {},
): Promise<Run> {
	const now = new Date(Date.now() - ago * 1000).toISOString();
	const run: Run = {
		...newRun({
			runId: ulid(),
			source: "linear",
			issueId: `live-${ulid()}`,
			issueKey: "ENG-77",
			trigger: "webhook",
			now,
		}),
		title,
		status,
		steps,
		...more,
	} as Run;
	await store().createRun(run);
	return run;
}
const output = (runId: string, from: number, to: number) =>
	(async () => {
		for (let i = from; i <= to; i++)
			await store().appendEvent(runId, { type: "agent.output", step: 1, message: `line ${i}` });
	})();
/** A step under way as the task keeps it: launched and heartbeating now (the sweeper leaves it be). */
const underWay = () => ({
	status: "running" as const,
	launchedAt: new Date().toISOString(),
	heartbeatAt: new Date().toISOString(),
});

beforeAll(async () => {
	if (!hasChromium) return;
	await mkdir(ARTIFACTS, { recursive: true });
	w = await createStackWorld();
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
	await w?.stop();
});

async function signedIn(
	path: string,
	token = w.stack?.readToken ?? "",
	viewport = { width: 1280, height: 800 },
): Promise<{ page: Page; errors: string[] }> {
	const page = await browser.newPage({ viewport });
	const errors: string[] = [];
	page.on("pageerror", (e) => errors.push(e.message));
	// A CSP violation is reported on the console; a failed request by its response.
	page.on(
		"console",
		(m) =>
			m.type() === "error" &&
			!m.text().startsWith("Failed to load resource") &&
			errors.push(m.text()),
	);
	page.on("response", (r) => {
		if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
	});
	await page.addInitScript((t) => localStorage.setItem("lisaToken", t), token);
	await page.goto(`${w.url()}${path}`);
	return { page, errors };
}

/** The page body's computed style property. */
const style = (page: Page, prop: "fontSize" | "lineHeight") =>
	page.evaluate(`getComputedStyle(document.body).${prop}`) as Promise<string>;

const atBottom = (page: Page) =>
	page
		.locator("#output")
		.evaluate(
			(e) => e.scrollHeight > e.clientHeight && e.scrollHeight - e.scrollTop - e.clientHeight < 2,
		);

describe.skipIf(!hasChromium)("a run's page, live", () => {
	it("updates in place: the output pane follows the newest lines unless the reader scrolled up", async () => {
		const run = await seeded("running", [
			{ ...planStep(0), status: "succeeded", agentState: "completed", provider: "claude" },
			{
				...newStep(1, "api"),
				...underWay(),
				agentState: "in_progress",
				provider: "claude",
			},
			newStep(2, "web"),
		]);
		await store().appendEvent(run.runId, {
			type: "step.launched",
			step: 1,
			message: "step 1 (api) attempt 1 started as t-1",
		});
		await output(run.runId, 1, 60);
		const { page, errors } = await signedIn(`/runs/${run.runId}`);
		await expect.poll(() => page.locator("#output").textContent()).toContain("line 60");
		// What the run is doing now, and the numbering every view uses (src/domain/step-label.js).
		expect(await page.locator("#summary").textContent()).toMatch(
			/^running · step 1 \(api\) · running · agent in_progress · 0 of 2 done · 1m \d+s · started \d+ min ago by webhook$/,
		);
		// The page numbered them with the domain's own module, which the stack serves as the file is.
		const loaded = (await page.evaluate(
			"performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)",
		)) as string[];
		expect(loaded).toContain(STEP_LABEL);
		expect(await (await fetch(`${w.url()}${STEP_LABEL}`)).text()).toBe(
			await readFile(
				fileURLToPath(new URL("../../src/domain/step-label.js", import.meta.url)),
				"utf8",
			),
		);
		expect(await page.locator("#summary .doing").textContent()).toContain(
			`${stepLabel(run.steps, 1)} · running`,
		);
		expect(await page.locator("#steps td.step").allTextContents()).toEqual(
			run.steps.map((s) => stepNumber(run.steps, s.index)),
		);
		expect(await page.locator("#steps td.step").allTextContents()).toEqual(["plan", "1", "2"]);
		// The agent's output is the pane's, not 60 rows of the timeline.
		expect(await page.locator("#timeline").textContent()).not.toContain("agent.output");
		expect(
			await page
				.locator("#timeline tr", { hasText: "step.launched" })
				.locator("td")
				.nth(2)
				.textContent(),
		).toBe("1");
		expect(await atBottom(page)).toBe(true);

		// Redrawn every second while active (the elapsed time moves): the same elements stay.
		// (Page code as text: the tests' TypeScript has no DOM.)
		await page.evaluate(
			`window.kept = ["output", "steps", "timeline", "notice"].map((id) => document.getElementById(id))`,
		);
		const before = await page.locator("#summary").textContent();
		await expect
			.poll(() => page.locator("#summary").textContent(), { timeout: 5000 })
			.not.toBe(before);
		expect(
			await page.evaluate(
				"window.kept.every((e) => e && e.isConnected && document.getElementById(e.id) === e)",
			),
		).toBe(true);

		// The reader scrolls up to read: new lines arrive below without moving the pane.
		await page.locator("#output").evaluate((e) => {
			e.scrollTop = 0;
		});
		await output(run.runId, 61, 61);
		await expect.poll(() => page.locator("#output").textContent()).toContain("line 61");
		expect(await page.locator("#output").evaluate((e) => e.scrollTop)).toBe(0);
		// Back at the bottom, it follows again.
		await page.locator("#output").evaluate((e) => {
			e.scrollTop = e.scrollHeight;
		});
		await output(run.runId, 62, 62);
		await expect.poll(() => page.locator("#output").textContent()).toContain("line 62");
		expect(await atBottom(page)).toBe(true);
		await page.screenshot({ path: `${ARTIFACTS}dashboard-live-run.png`, fullPage: true });
		expect(errors).toEqual([]);
		await page.close();
	});

	it("keeps an action's notice until it is dismissed; a cancelled run and step look cancelled, not failed", async () => {
		const admin = w.stack?.apiToken ?? "";
		const run = await seeded("running", [
			{
				...newStep(0, "api"),
				...underWay(),
				agentState: "in_progress",
				provider: "claude",
			},
		]);
		const { page, errors } = await signedIn(`/runs/${run.runId}`, admin);
		await page.locator("#cancel").waitFor();
		expect(await page.locator("#output").textContent()).toBe("(no output yet)");
		await page.click("#cancel");
		await expect.poll(() => page.locator("#notice .text").textContent()).toBe("Cancelling…");
		// The run is cancelled through the pipeline; the page is drawn again with it.
		await expect
			.poll(() => page.locator("#summary .badge").first().textContent(), { timeout: 20_000 })
			.toBe("cancelled");
		await expect.poll(() => page.locator("#timeline").textContent()).toContain("run.cancelled");
		expect(await page.locator("#notice .text").textContent()).toBe("Cancelling…");
		expect(await page.locator("#notice").isVisible()).toBe(true);
		// Asked for, not an error: said plainly, not in red.
		expect(await page.locator("#run-error").textContent()).toBe(
			"Cancelled: cancelled through the API",
		);
		expect(await page.locator("#run-error").getAttribute("class")).toBe("muted reason");
		expect(await page.locator("#steps .badge").allTextContents()).toEqual(["cancelled"]);
		expect(await page.locator("#steps td.agent").textContent()).toBe("");
		// The step's own error cell, as plain as the run's.
		expect(await page.locator("#steps tr[data-step] td").last().getAttribute("class")).toBe(
			"muted reason",
		);
		expect(await page.locator("#output").textContent()).toBe("(no output)");
		// Finished: retrying is offered to the admin token instead.
		expect(await page.locator("#retry").count()).toBe(1);
		await page.click("#notice .dismiss");
		expect(await page.locator("#notice").isVisible()).toBe(false);
		// Retrying says so, with a link to the new run's page.
		await page.click("#retry");
		const again = page.locator('#notice .text a[href^="/runs/"]');
		await again.waitFor();
		const retried = (await again.textContent()) ?? "";
		expect(await page.locator("#notice .text").textContent()).toBe(`Retrying as ${retried}`);
		expect(await again.getAttribute("href")).toBe(`/runs/${retried}`);
		// It is a run of the same issue (ended before the charts below count the day's runs).
		const ended = await w.waitForRun(retried, (r) => isTerminalRun(r.status as RunStatus));
		expect([ended.trigger, ended.issueId]).toEqual(["retry", run.issueId]);
		// In the runs list too: the reason, not an error.
		await page.goto(`${w.url()}/`);
		const why = page.locator(`tr[data-run="${run.runId}"] td.why`);
		await expect.poll(() => why.textContent()).toBe("cancelled through the API");
		expect(await why.locator(".error").count()).toBe(0);
		expect(errors).toEqual([]);
		await page.close();
	});
});

describe.skipIf(!hasChromium)("a run's page, redrawn while the reader reads it", () => {
	it("keeps a step's unfolded files unfolded when another step's update redraws the table", async () => {
		const run = await seeded("running", [
			{
				...newStep(0, "api"),
				status: "succeeded",
				provider: "claude",
				prUrl: "https://github.com/acme/api/pull/7",
				prTitle: "feat: <b>export</b> reports",
				changes: {
					files: 2,
					additions: 12,
					deletions: 1,
					list: [
						{ path: "src/<img src=x onerror=alert(1)>.ts", additions: 10, deletions: 1 },
						{ path: "logo.png", additions: 0, deletions: 0, binary: true },
					],
				},
			},
			{ ...newStep(1, "web"), ...underWay(), agentState: "just_started", provider: "claude" },
		]);
		const { page, errors } = await signedIn(`/runs/${run.runId}`);
		const files = page.locator('#steps tr[data-step="0"] details.files');
		await files.locator("summary").click();
		expect(await files.locator("li").allTextContents()).toEqual([
			"src/<img src=x onerror=alert(1)>.ts +10 −1",
			"logo.png binary",
		]);
		// Untrusted text (the PR's title, a path) is text, never markup.
		expect(
			await page.locator('#steps a[href="https://github.com/acme/api/pull/7"]').textContent(),
		).toBe("feat: <b>export</b> reports");
		expect(await page.locator("#steps img, #steps b").count()).toBe(0);
		// The running step's task writes its agent's state: the steps table is drawn again.
		await store().updateStepFields(run.runId, 1, 1, { agentState: "in_progress" });
		await expect
			.poll(() => page.locator('#steps tr[data-step="1"] td.agent').textContent())
			.toBe("in_progress");
		expect(await files.getAttribute("open")).toBe("");
		expect(errors).toEqual([]);
		await page.close();
	});
});

describe.skipIf(!hasChromium)("links from the API", () => {
	it("makes only web links of its URLs: a javascript: URL stays text", async () => {
		const run = await seeded(
			"failed",
			[
				{
					...newStep(0, "api"),
					status: "failed",
					prUrl: "javascript:document.title='pwned'",
					prTitle: "Open me",
				},
			],
			95,
			"Watch me",
			{ url: "JavaScript:document.title='pwned'" },
		);
		const { page, errors } = await signedIn(`/runs/${run.runId}`);
		await page.locator('#steps tr[data-step="0"]').waitFor();
		await expect.poll(() => page.locator("#summary").textContent()).toContain("issue");
		expect(await page.locator("#summary a, #steps a").count()).toBe(0);
		expect(await page.locator('#steps tr[data-step="0"] td.change').textContent()).toBe("Open me");
		// The runs list: the run's own page is a link, its issue's URL is not.
		await page.goto(`${w.url()}/`);
		const row = page.locator(`tr[data-run="${run.runId}"]`);
		await expect.poll(() => row.locator("td.title").textContent()).toBe("Watch me");
		expect(
			await row.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href"))),
		).toEqual([`/runs/${run.runId}`]);
		expect(errors).toEqual([]);
		await page.close();
	});
});

describe.skipIf(!hasChromium)("the runs list's filters", () => {
	it("says what the API refused in a filter, on the page", async () => {
		const { page, errors } = await signedIn("/");
		await page.locator("#runs").waitFor();
		await page.fill("#repo-filter", "r".repeat(201));
		await page.press("#repo-filter", "Enter");
		await expect
			.poll(() => page.locator("#failure").textContent())
			.toMatch(/^invalid request; repo: ./);
		expect(page.url()).toBe(`${w.url()}/?repo=${"r".repeat(201)}`);
		// The refusal itself is the only failed request; the page threw nothing.
		expect(errors).toEqual([expect.stringMatching(/^400 .*\/api\/runs\?repo=r+&limit=50$/)]);
		// Mended, the list answers again and the failure is gone.
		await page.fill("#repo-filter", "api");
		await page.press("#repo-filter", "Enter");
		await expect.poll(() => page.locator("#failure").count()).toBe(0);
		expect(page.url()).toBe(`${w.url()}/?repo=api`);
		await page.close();
	});
});

describe.skipIf(!hasChromium)("a token refused while the page is open", () => {
	it("signs the page out: the run's stream stops and nothing is drawn under the login form", async () => {
		const run = await seeded("running", [
			{ ...newStep(0, "api"), ...underWay(), agentState: "in_progress", provider: "claude" },
		]);
		const page = await browser.newPage();
		await page.clock.install();
		await page.addInitScript((t) => localStorage.setItem("lisaToken", t), w.stack?.readToken ?? "");
		await page.goto(`${w.url()}/runs/${run.runId}`);
		await page.locator("#heading").waitFor();
		await expect.poll(() => page.locator("#live").textContent()).toBe("· live");
		// The token is revoked: the stats header's next refresh (every 15 s) is refused.
		await page.route("**/api/stats", (r) =>
			r.fulfill({ status: 401, contentType: "application/json", body: '{"error":"unauthorized"}' }),
		);
		await page.clock.fastForward("00:16");
		await page.locator("#login").waitFor();
		// The run goes on and the page's clock too (its elapsed time is redrawn each second): the
		// page stays signed out, its stream closed.
		await output(run.runId, 1, 3);
		await page.clock.fastForward("00:05");
		expect(await page.locator("#view").evaluate((v) => v.childElementCount)).toBe(0);
		expect(await page.locator("#heading, #output").count()).toBe(0);
		await expect.poll(() => page.locator("#live").textContent()).toBe("");
		expect(await page.evaluate(() => localStorage.getItem("lisaToken"))).toBeNull();
		await page.close();
	});
});

/** Each chart with the colour its today's mark is drawn in (the series of src/dashboard/charts.js). */
const CHART_COLORS = [
	["chart-runs", "#2e9d57"],
	["chart-success", "#2e9d57"],
	["chart-pr", "#3565c9"],
	["chart-spend", "#8a5a00"],
] as const;

/** How many pixels of a chart's canvas are `color`: what it drew of that series. */
function inked(page: Page, id: string, color: string): Promise<number> {
	return page.locator(`#${id} canvas`).evaluate((c, hex) => {
		type Canvas = {
			width: number;
			height: number;
			getContext(kind: "2d"): {
				getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
			} | null;
		};
		const canvas = c as unknown as Canvas;
		const rgb = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
		const { data } = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height) ?? {
			data: [],
		};
		let n = 0;
		for (let i = 0; i < data.length; i += 4)
			if (data[i + 3] === 255 && rgb.every((v, k) => Math.abs((data[i + k] ?? 0) - v) < 8)) n++;
		return n;
	}, color);
}

describe.skipIf(!hasChromium)("the wall view and the charts", () => {
	it("fills a wide screen in large type, active runs first with what they are doing", async () => {
		const planning = await seeded(
			"planning",
			[{ ...planStep(0), ...underWay(), agentState: "just_started" }],
			200,
			"Plan me",
		);
		const done = await seeded(
			"succeeded",
			[{ ...newStep(0, "api"), status: "succeeded" }],
			4000,
			"Done",
		);
		const { page, errors } = await signedIn("/?wall=1", undefined, { width: 1920, height: 1080 });
		const row = (id: string) => page.locator(`tr[data-run="${id}"]`);
		await row(planning.runId).waitFor();
		expect(await row(planning.runId).locator("td.now").textContent()).toMatch(
			/^plan · running · agent just_started · 3m \d+s$/,
		);
		expect(await row(planning.runId).locator("td.repos").textContent()).toBe("(the plan decides)");
		// Active runs first, however new the finished ones are.
		const ids = await page
			.locator("#runs tr[data-run]")
			.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run")));
		expect(ids.indexOf(planning.runId)).toBeLessThan(ids.indexOf(done.runId));
		expect(await row(done.runId).locator("td.now").textContent()).toBe("");
		// Relative times on one line, the exact time as the tooltip.
		const started = row(done.runId).locator("td.started time");
		expect(await started.textContent()).toBe("1 h ago");
		expect(await started.getAttribute("title")).toMatch(/\d/);
		const lineHeight = Number.parseFloat(await style(page, "lineHeight"));
		expect((await started.boundingBox())?.height).toBeLessThan(1.5 * lineHeight);
		// Full width, large type.
		expect(await style(page, "fontSize")).toBe("20px");
		expect((await page.locator("#runs").boundingBox())?.width).toBeGreaterThan(1800);
		// The switch back keeps the rest of the URL.
		expect(await page.locator("#wall-toggle").getAttribute("href")).toBe("/");
		await page.screenshot({ path: `${ARTIFACTS}dashboard-wall.png`, fullPage: true });
		expect(errors).toEqual([]);
		await page.close();

		// The normal view: 14 px, with the switch to the wall view and a filter kept.
		const normal = await signedIn("/?status=planning");
		await normal.page.locator(`tr[data-run="${planning.runId}"]`).waitFor();
		expect(await style(normal.page, "fontSize")).toBe("14px");
		expect(await normal.page.locator("#wall-toggle").getAttribute("href")).toBe(
			"/?status=planning&wall=1",
		);
		await normal.page.close();

		// Relative times move on while the screen stays up: two minutes later (the page's clock).
		const later = await browser.newPage();
		await later.clock.install();
		await later.addInitScript(
			(t) => localStorage.setItem("lisaToken", t),
			w.stack?.readToken ?? "",
		);
		await later.goto(`${w.url()}/?wall=1`);
		const when = later.locator(`tr[data-run="${planning.runId}"] td.started`);
		await expect.poll(() => when.textContent()).toMatch(/^3 min ago$/);
		await later.clock.fastForward("02:00");
		await expect.poll(() => when.textContent()).toBe("5 min ago");
		await later.close();
	});

	it("draws runs per day by outcome, success rate, time to PR and spend per day", async () => {
		const finished = (status: "succeeded" | "failed", usd: number): Step => ({
			...newStep(0, "api"),
			status,
			provider: "claude",
			launchedAt: new Date(Date.now() - 200_000).toISOString(),
			finishedAt: new Date(Date.now() - 100_000).toISOString(),
			...(status === "succeeded" ? { prUrl: "https://github.com/acme/api/pull/9" } : {}),
			usage: [
				{
					attempt: 1,
					runs: [],
					total: { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
					seconds: 100,
					cost: { modelUsd: usd, knownModelUsd: usd, computeUsd: 0 },
				},
			],
		});
		// Counted in their day as finalize counts a finished run.
		for (const [status, usd] of [
			["succeeded", 1.5],
			["succeeded", 2],
			["failed", 0.5],
		] as const) {
			const run = await seeded(status, [finished(status, usd)], 300);
			await store().countRun({ ...run, finishedAt: new Date().toISOString() });
		}
		const { page, errors } = await signedIn("/");
		await expect.poll(() => page.locator("#charts .chart canvas").count()).toBe(4);
		expect(await page.locator("#charts .chart h4").allTextContents()).toEqual([
			"Runs per day, by outcome",
			"Success rate",
			"Time to PR, median",
			"Spend per day",
		]);
		// The legend says the day under the cursor: today's numbers, from /api/stats' byDay.
		const stats = (
			await w.api<{ byDay: Record<string, { succeeded: number; failed: number }> }>("/api/stats")
		).body;
		const today = stats.byDay[new Date().toISOString().slice(0, 10)];
		expect(today?.succeeded).toBeGreaterThanOrEqual(2);
		const chart = page.locator("#chart-runs .u-over");
		const box = await chart.boundingBox();
		if (!box) throw new Error("no chart");
		await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
		const legend = (id: string, label: string) =>
			page
				.locator(`#${id} .u-legend .u-series`, { hasText: label })
				.locator(".u-value")
				.textContent();
		await expect.poll(() => legend("chart-runs", "succeeded")).toBe(String(today?.succeeded));
		expect(await legend("chart-runs", "failed")).toBe(String(today?.failed));
		await page.screenshot({ path: `${ARTIFACTS}dashboard-charts.png`, fullPage: true });
		// Every run is today's: each chart draws that lone day (a dot where a line has no second point).
		for (const [id, color] of CHART_COLORS)
			expect(await inked(page, id, color), `${id} draws today`).toBeGreaterThan(20);
		// And on a wall screen.
		const onWall = await signedIn("/?wall=1", undefined, { width: 1920, height: 1080 });
		await expect.poll(() => onWall.page.locator("#charts .chart canvas").count()).toBe(4);
		for (const [id, color] of CHART_COLORS)
			expect(await inked(onWall.page, id, color), `${id} draws today on a wall`).toBeGreaterThan(
				10,
			);
		expect(onWall.errors).toEqual([]);
		await onWall.page.close();
		// A narrower window: the charts shrink to stay two side by side within it (drawn at 1280 px,
		// they would wrap one under the other and run past its edge).
		const card = async (id: string) => {
			const b = await page.locator(`#${id}`).boundingBox();
			if (!b) throw new Error(`no #${id}`);
			return b;
		};
		const wide = await card("chart-runs");
		await page.setViewportSize({ width: 800, height: 800 });
		await expect.poll(async () => (await card("chart-runs")).width).toBeLessThan(wide.width);
		const [left, right] = [await card("chart-runs"), await card("chart-success")];
		expect(right.y).toBe(left.y);
		expect(right.x + right.width).toBeLessThanOrEqual(800);
		expect(await page.locator("#charts canvas").count()).toBe(4);
		expect(errors).toEqual([]);
		await page.close();
	});
});
