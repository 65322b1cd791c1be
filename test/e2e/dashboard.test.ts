import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../support/browser";
import { createStackWorld, type StackWorld } from "../support/stack";

// The dashboard in a real browser: Debian's Chromium driven by playwright-core (.ci/run installs it).
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));

let w: StackWorld;
let browser: Browser;
let ok: string;
let failed: string;
const start = async (title: string, description = "") =>
	(
		(await (await w.sendWebhook(w.createdWebhook(w.issue(title, description)))).json()) as {
			runId: string;
		}
	).runId;

beforeAll(async () => {
	if (!hasChromium) return;
	await mkdir(ARTIFACTS, { recursive: true });
	w = await createStackWorld();
	browser = await launchChromium();
	ok = await start(`Render <img src=x onerror="document.title='pwned'"> safely`);
	failed = await start("Explode", "lisa-fake: stderr=kaboom\nlisa-fake: exit=4");
	await Promise.all([w.waitForRun(ok), w.waitForRun(failed)]);
});
afterAll(async () => {
	await browser?.close();
	await w?.stop();
});

/** A page signed in with the read-only token: what a wall screen uses. */
async function signedIn(path = "/"): Promise<Page> {
	const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
	await page.goto(`${w.url()}${path}`);
	await page.locator("#login").waitFor();
	await page.fill("#token", w.stack?.readToken ?? "");
	await page.click("#login button");
	return page;
}

const row = (page: Page, runId: string) => page.locator(`tr[data-run="${runId}"]`);

describe.skipIf(!hasChromium)("dashboard", () => {
	it("lists runs with badges, repos, provider, PRs and the stats header", async () => {
		const page = await signedIn();
		await row(page, ok).waitFor();
		await expect.poll(() => row(page, ok).locator(".badge").textContent()).toBe("succeeded");
		// Issue text is untrusted: shown as text, never as markup.
		expect(await row(page, ok).textContent()).toContain(
			"<img src=x onerror=\"document.title='pwned'\">",
		);
		expect(await page.locator("img").count()).toBe(0);
		expect(await row(page, ok).locator("td").nth(3).textContent()).toBe("api");
		expect(await row(page, ok).locator("td").nth(4).textContent()).toBe("claude");
		expect(
			await row(page, ok).locator('a[href^="https://github.com/acme/api/pull/"]').count(),
		).toBe(1);
		expect(await row(page, failed).locator(".badge").textContent()).toBe("failed");
		// The provider that failed is on the step too, so per-provider stats count failures.
		expect(await row(page, failed).locator("td").nth(4).textContent()).toBe("claude");
		expect(await row(page, failed).locator(".error").textContent()).toMatch(/exited with code 4/);

		const stat = (label: string) =>
			page.locator(".stat", { hasText: label }).locator("b").textContent();
		await expect.poll(() => stat("succeeded")).toBe("1");
		expect(await stat("failed")).toBe("1");
		expect(await stat("success rate")).toBe("50%");

		// The status filter is in the URL, so a wall screen can open a filtered view directly.
		await page.selectOption("#status-filter", "failed");
		await expect.poll(() => page.locator("#runs tr[data-run]").count()).toBe(1);
		expect(page.url()).toMatch(/\?status=failed$/);
		await page.close();
	});

	it("shows a run started through the API and follows it as it changes", async () => {
		const page = await signedIn();
		await row(page, ok).waitFor();
		const issue = w.issue("Add a health page", "lisa-fake: sleep=8");
		const started = await w.api<{ id: string }>("/api/runs", {
			method: "POST",
			body: JSON.stringify({ issue: issue.identifier }),
		});
		expect(started.status).toBe(202);
		const id = started.body.id;
		// The list picks the new run up and its status moves on without a reload.
		await row(page, id).waitFor({ timeout: 20_000 });
		await expect
			.poll(() => row(page, id).locator(".badge").textContent(), { timeout: 20_000 })
			.toBe("running");
		await page.screenshot({ path: `${ARTIFACTS}dashboard.png`, fullPage: true });

		await page.click(`tr[data-run="${id}"] a[href="/runs/${id}"]`);
		await page.locator("#steps").waitFor();
		// The fake agent prints a line a second; the task sends its output every 5 s: the tail
		// shows it while the run is still going.
		await expect
			.poll(() => page.locator("#output").textContent(), { timeout: 20_000 })
			.toMatch(/working… 2\/8/);
		expect(await page.locator("#summary .badge").textContent()).toBe("running");
		await page.screenshot({ path: `${ARTIFACTS}dashboard-run.png`, fullPage: true });
		await expect
			.poll(() => page.locator("#summary .badge").textContent(), { timeout: 30_000 })
			.toBe("succeeded");
		expect(await page.locator("#steps .badge").first().textContent()).toBe("succeeded");
		// The run's last events are written just after its status: the stream brings them next.
		await expect
			.poll(() => page.locator("#timeline").textContent(), { timeout: 10_000 })
			.toContain("run.succeeded");
		expect(await page.locator('#steps a[href^="https://github.com/acme/api/pull/"]').count()).toBe(
			1,
		);
		await page.close();
	});

	it("shows a failed run's error, and says the read-only token cannot retry it", async () => {
		const page = await signedIn(`/runs/${failed}`);
		await page.locator("#run-error").waitFor();
		expect(await page.locator("#run-error").textContent()).toMatch(/claude exited with code 4/);
		// The stream sends the run before its events: the timeline may be drawn a frame later.
		await expect.poll(() => page.locator("#timeline").textContent()).toContain("run.failed");
		await page.click("#retry");
		await expect.poll(() => page.locator("#notice").textContent()).toMatch(/read-only/);
		await page.close();
	});

	it("shows a run's follow-up rounds, and a round's parent", async () => {
		// Written as the follow-up handler records them (the rounds themselves: follow-ups.test.ts).
		const store = w.stack?.deps.store;
		const parent = await store?.getRun(ok);
		const round = await store?.getRun(failed);
		if (!store || !parent || !round) throw new Error("no runs");
		const prUrl = "https://github.com/acme/api/pull/1";
		const now = new Date().toISOString();
		await store.updateRun(
			parent,
			{
				set: { followUps: { rounds: [{ runId: failed, trigger: "ci_failure", prUrl, at: now }] } },
			},
			now,
		);
		await store.updateRun(
			round,
			{ set: { parentRunId: ok, round: { number: 1, prUrl, repo: "api", branch: "feat/x" } } },
			now,
		);
		const page = await signedIn(`/runs/${ok}`);
		const item = page.locator("#follow-ups li");
		await expect.poll(() => item.count()).toBe(1);
		expect(await item.textContent()).toContain("ci failure · failed");
		expect(await item.locator(`a[href="/runs/${failed}"]`).count()).toBe(1);
		await page.goto(`${w.url()}/runs/${failed}`);
		await expect.poll(() => page.locator("#round").textContent()).toContain("Follow-up round 1 of");
		expect(await page.locator(`#round a[href="/runs/${ok}"]`).count()).toBe(1);
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
