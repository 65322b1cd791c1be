import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorld, type World } from "../support/world";

// The dashboard in a real browser: Debian's Chromium driven by playwright-core (.ci/run installs it).
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);

let w: World;
let browser: Browser;
let ok: string;
let failed: string;
beforeAll(async () => {
	if (!hasChromium) return;
	w = await createWorld();
	browser = await chromium.launch({
		executablePath: CHROMIUM,
		args: [
			"--no-sandbox",
			"--disable-gpu",
			"--disable-quic",
			"--no-first-run",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-sync",
		],
	});
	const start = async (title: string, description = "") =>
		(
			(await (await w.sendWebhook(w.createdWebhook(w.issue(title, description)))).json()) as {
				runId: string;
			}
		).runId;
	ok = await start(`Render <img src=x onerror="document.title='pwned'"> safely`);
	failed = await start("Explode", "lisa-fake: stderr=kaboom\nlisa-fake: exit=4");
	await Promise.all([w.waitForRun(ok), w.waitForRun(failed)]);
});
afterAll(async () => {
	await browser?.close();
	await w?.stop();
});

describe.skipIf(!hasChromium)("dashboard", () => {
	it("asks for the token, lists runs, and shows a run's steps and timeline", async () => {
		const page = await browser.newPage();
		await page.goto(`${w.url()}/`);
		await page.locator("#login").waitFor();
		await page.fill("#token", w.stack?.apiToken ?? "");
		await page.click("#login button");

		const rows = page.locator("table tr");
		await page.locator(`a[href="/runs/${ok}"]`).waitFor();
		expect(await rows.count()).toBe(3); // header + two runs
		const okRow = page.locator("tr", { has: page.locator(`a[href="/runs/${ok}"]`) });
		expect(await okRow.locator(".status").textContent()).toBe("succeeded");
		// Issue text is untrusted: shown as text, never as markup.
		expect(await okRow.textContent()).toContain("<img src=x onerror=\"document.title='pwned'\">");
		expect(await page.locator("img").count()).toBe(0);
		const failedRow = page.locator("tr", { has: page.locator(`a[href="/runs/${failed}"]`) });
		expect(await failedRow.locator(".status").textContent()).toBe("failed");

		await page.click(`a[href="/runs/${failed}"]`);
		await page.locator("h3", { hasText: "Timeline" }).waitFor();
		expect(await page.locator("p.error").first().textContent()).toMatch(
			/claude exited with code 4/,
		);
		const timeline = await page.locator("table").nth(1).textContent();
		expect(timeline).toContain("run.requested");
		expect(timeline).toContain("run.failed");

		await page.goto(`${w.url()}/runs/${ok}`);
		const prLink = page.locator('a[href^="https://github.com/acme/api/pull/"]');
		await prLink.first().waitFor();
		expect(await page.title()).toBe("Lisa runs");
		await page.close();
	});

	it("asks again when the stored token is wrong", async () => {
		const page = await browser.newPage();
		await page.goto(`${w.url()}/`);
		await page.evaluate(() => localStorage.setItem("lisaToken", "wrong"));
		await page.reload();
		await page.locator("#login").waitFor({ state: "visible" });
		expect(await page.evaluate(() => localStorage.getItem("lisaToken"))).toBeNull();
		await page.close();
	});
});
