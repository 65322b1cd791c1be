import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Run } from "../../src/domain/run";
import { hasChromium, launchChromium } from "../support/browser";
import { diamondEpic, HIDDEN } from "../support/epics";
import { createStackWorld, type StackWorld } from "../support/stack";

// An epic on the dashboard (docs/epics.md › Epics, docs/dashboard.md › Epics) in a real browser:
// its phase and task table on its page, the link from a task's run back to it, its tag in the list.
// The epic is written straight into the store as the pipeline would keep it.

const ATTACK = `<img src=x onerror="document.title='pwned'">`;

let w: StackWorld;
let browser: Browser;
let epic: Run;
let task: Run;

beforeAll(async () => {
	if (!hasChromium) return;
	w = await createStackWorld();
	browser = await launchChromium();
	({ epic, task } = diamondEpic({ title01: `Add the model ${ATTACK}` }));
	// A sub-issue link that is not a web address stays text.
	const tasks = epic.epic?.tasks ?? [];
	const third = tasks[2];
	if (third?.issue) third.issue.url = "javascript:alert(1)";
	const store = w.stack?.deps.store;
	if (!store) throw new Error("no stack");
	await store.createRun(epic);
	await store.createRun(task);
});
afterAll(async () => {
	await browser?.close();
	await w?.stop();
});

async function signedIn(path: string): Promise<Page> {
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
	await page.goto(w.stack?.signInLink(path) ?? "");
	return page;
}

describe.skipIf(!hasChromium)("an epic on the dashboard", () => {
	it("shows the epic's phase and its task graph: statuses, sub-issues, runs, PRs; titles as text", async () => {
		const page = await signedIn(`/runs/${epic.runId}`);
		const rows = page.locator("#epic-tasks tr[data-task]");
		await expect.poll(() => rows.count()).toBe(4);
		expect(await page.locator("#epic-phase").textContent()).toBe("Phase tasks · 1 of 4 tasks done");
		const cells = async (id: string) =>
			page.locator(`#epic-tasks tr[data-task="${id}"] td`).allTextContents();
		expect(await cells("01")).toEqual([
			"01",
			`Add the model ${ATTACK}`,
			"api",
			"–",
			"done",
			"ENG-901",
			expect.any(String),
			"acme/api/pull/71",
		]);
		expect(await cells("02")).toEqual([
			"02",
			"Serve it over HTTP",
			"api",
			"01",
			"running",
			"ENG-902",
			task.runId,
			"",
		]);
		expect(await cells("03")).toEqual([
			"03",
			"Show it on the page",
			"web",
			"01",
			"failedthe agent gave up",
			"ENG-903",
			"–",
			"",
		]);
		expect(await cells("04")).toEqual([
			"04",
			"Document it",
			"api",
			"02, 03",
			"blockedblocked by 03",
			"ENG-904",
			"–",
			"",
		]);
		const row = (id: string) => page.locator(`#epic-tasks tr[data-task="${id}"]`);
		expect(await row("04").locator(".badge").getAttribute("class")).toBe("badge blocked");
		// The sub-issue, the task's run and its pull request are links; a javascript: URL is not.
		expect(await row("02").locator('a[href="https://linear.app/acme/issue/ENG-902"]').count()).toBe(
			1,
		);
		expect(await row("02").locator(`a[href="/runs/${task.runId}"]`).count()).toBe(1);
		expect(await row("01").locator('a[href="https://github.com/acme/api/pull/71"]').count()).toBe(
			1,
		);
		expect(await row("03").locator("a").count()).toBe(0);
		// The title with markup is text: no image, no script ran.
		expect(await page.locator("img").count()).toBe(0);
		expect(await page.title()).not.toBe("pwned");
		expect(await page.locator("body").textContent()).not.toContain(HIDDEN);
		await page.close();
	});

	it("links a task's run back to its epic, and tags the epic in the list", async () => {
		const page = await signedIn(`/runs/${task.runId}`);
		await expect
			.poll(() => page.locator("#epic-parent").textContent())
			.toBe(`Task 02 of epic ${epic.runId}`);
		await page.click(`#epic-parent a[href="/runs/${epic.runId}"]`);
		await expect.poll(() => page.locator("#epic-tasks tr[data-task]").count()).toBe(4);

		await page.goto(`${w.url()}/`);
		const listed = page.locator(`tr[data-run="${epic.runId}"] td.title .tag`);
		await expect.poll(() => listed.textContent()).toBe("epic");
		expect(await listed.getAttribute("title")).toBe("1 of 4 tasks done");
		expect(await page.locator(`tr[data-run="${task.runId}"] td.title .tag`).textContent()).toBe(
			"task",
		);
		await page.close();
	});

	it("offers the admin token to continue a finished epic, which posts the epic run's retry", async () => {
		const { epic: failed } = diamondEpic();
		const store = w.stack?.deps.store;
		if (!store || !w.stack) throw new Error("no stack");
		await store.createRun({ ...failed, status: "failed", finishedAt: new Date().toISOString() });
		const page = await browser.newPage();
		await page.addInitScript((t) => localStorage.setItem("lisaToken", t), w.stack.apiToken);
		await page.goto(`${w.url()}/runs/${failed.runId}`);
		// Answered here: what the retry of an epic queues is api-epics.test.ts'.
		const posted: string[] = [];
		await page.route(`**/api/runs/${failed.runId}/retry`, (route) => {
			posted.push(route.request().method());
			return route.fulfill({
				status: 202,
				contentType: "application/json",
				body: JSON.stringify({ id: "01NEWRUN", retryOf: failed.runId }),
			});
		});
		await expect.poll(() => page.locator("#retry").textContent()).toBe("Continue the epic");
		await page.click("#retry");
		await expect.poll(() => posted).toEqual(["POST"]);
		await page.close();
	});
});
