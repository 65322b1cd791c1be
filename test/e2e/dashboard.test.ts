import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRun, newStep, planStep, type Run } from "../../src/domain/run";
import type { StepAttemptUsage } from "../../src/domain/usage";
import { hasChromium, launchChromium } from "../support/browser";
import { createStackWorld, type StackWorld } from "../support/stack";

// The dashboard in a real browser: Debian's Chromium driven by playwright-core (.ci/run installs it).
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));

let w: StackWorld;
let browser: Browser;
let ok: string;
let failed: string;

beforeAll(async () => {
	if (!hasChromium) return;
	await mkdir(ARTIFACTS, { recursive: true });
	w = await createStackWorld();
	browser = await launchChromium();
	ok = await w.startRun(`Render <img src=x onerror="document.title='pwned'"> safely`);
	failed = await w.startRun("Explode", "lisa-fake: stderr=kaboom\nlisa-fake: exit=4");
	await Promise.all([w.waitForRun(ok), w.waitForRun(failed)]);
});
afterAll(async () => {
	await browser?.close();
	await w?.stop();
});

/** A page signed in with the read-only token (what a wall screen uses), or the one given. */
async function signedIn(
	path = "/",
	token = w.stack?.readToken ?? "",
	viewport = { width: 1280, height: 800 },
): Promise<Page> {
	const page = await browser.newPage({ viewport });
	await page.goto(`${w.url()}${path}`);
	await page.locator("#login").waitFor();
	await page.fill("#token", token);
	await page.click("#login button");
	return page;
}

const row = (page: Page, runId: string) => page.locator(`tr[data-run="${runId}"]`);

describe.skipIf(!hasChromium)("dashboard", () => {
	it("signs in from a printed link's one-time #code=, and takes the code off the address", async () => {
		const page = await browser.newPage();
		await page.goto(w.stack?.signInLink("/?status=failed") ?? "");
		await row(page, failed).waitFor();
		expect(page.url()).toBe(`${w.url()}/?status=failed`);
		expect(await page.evaluate(() => localStorage.getItem("lisaToken"))).toBe(w.stack?.readToken);
		expect(await page.locator("#login").isHidden()).toBe(true);
		await page.close();
	});

	it("lists runs with badges, repos, provider, PRs and the stats header", async () => {
		const page = await signedIn();
		await row(page, ok).waitFor();
		await expect
			.poll(() => row(page, ok).locator("td.status .badge").textContent())
			.toBe("succeeded");
		// Issue text is untrusted: shown as text, never as markup.
		expect(await row(page, ok).textContent()).toContain(
			"<img src=x onerror=\"document.title='pwned'\">",
		);
		expect(await page.locator("img").count()).toBe(0);
		expect(await row(page, ok).locator("td.repos").textContent()).toBe("api");
		expect(await row(page, ok).locator("td").nth(5).textContent()).toBe("claude");
		expect(
			await row(page, ok).locator('a[href^="https://github.com/acme/api/pull/"]').count(),
		).toBe(1);
		expect(await row(page, failed).locator("td.status .badge").textContent()).toBe("failed");
		// The provider that failed is on the step too, so per-provider stats count failures.
		expect(await row(page, failed).locator("td").nth(5).textContent()).toBe("claude");
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
			.poll(() => row(page, id).locator("td.status .badge").textContent(), { timeout: 20_000 })
			.toBe("running");
		await page.screenshot({ path: `${ARTIFACTS}dashboard.png`, fullPage: true });

		await page.click(`tr[data-run="${id}"] a[href="/runs/${id}"]`);
		await page.locator("#steps").waitFor();
		// The fake agent prints a line a second; the task sends its output every 5 s: the tail
		// shows it while the run is still going.
		await expect
			.poll(() => page.locator("#output").textContent(), { timeout: 20_000 })
			.toMatch(/working… 2\/8/);
		expect(await page.locator("#summary > .badge").textContent()).toBe("running");
		await page.screenshot({ path: `${ARTIFACTS}dashboard-run.png`, fullPage: true });
		await expect
			.poll(() => page.locator("#summary > .badge").textContent(), { timeout: 30_000 })
			.toBe("succeeded");
		expect(await page.locator("#steps .badge").first().textContent()).toBe("succeeded");
		// The run's last events are written just after its status: the stream brings them next.
		await expect
			.poll(() => page.locator("#timeline").textContent(), { timeout: 10_000 })
			.toContain("run.succeeded");
		const pr = page.locator('#steps a[href^="https://github.com/acme/api/pull/"]');
		expect(await pr.count()).toBe(1);
		// The link reads as the pull request's title; what it changed unfolds to its files.
		expect(await pr.textContent()).toMatch(/^feat: /);
		const files = page.locator("#steps details.files");
		expect(await files.locator("summary").textContent()).toBe("1 file +3 −0");
		await files.locator("summary").click();
		expect(await files.locator("li").textContent()).toBe("LISA_CHANGE.md +3 −0");
		await page.close();
	});

	it("shows a failed run's error, and offers the read-only token no retry", async () => {
		const page = await signedIn(`/runs/${failed}`);
		await page.locator("#run-error").waitFor();
		expect(await page.locator("#run-error").textContent()).toMatch(/claude exited with code 4/);
		expect(await page.locator("#run-error").getAttribute("class")).toBe("error");
		// The stream sends the run before its events: the timeline may be drawn a frame later.
		await expect.poll(() => page.locator("#timeline").textContent()).toContain("run.failed");
		// GET /api/whoami said "read": the page offers no action the API would refuse.
		expect(await page.locator("#read-only").textContent()).toMatch(/need the admin token/);
		expect(await page.locator("#retry, #cancel, #approve").count()).toBe(0);
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

	it("shows what a run costs, and asks for approval with a button that calls the API", async () => {
		// Written as a run paused at its limit would be (the pause itself: the budget's own tests).
		const store = w.stack?.deps.store;
		if (!store || !w.stack) throw new Error("no stack");
		const now = new Date().toISOString();
		// Planned under a $5 limit: the run's config snapshot says so, as the pipeline's would.
		const current = w.stack.deps.config();
		if (current.status !== "ok") throw new Error("the stack's config does not load");
		const config = { ...current.config, limits: { ...current.config.limits, max_run_cost_usd: 5 } };
		const attempt = (n: number, model: number | null, compute: number): StepAttemptUsage => ({
			attempt: n,
			runs: [],
			total: { inputTokens: 100_000, outputTokens: 5_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
			seconds: 300,
			cost: {
				modelUsd: model,
				knownModelUsd: model ?? 0,
				computeUsd: compute,
				...(model === null ? { unknown: ["acme:x1: no price (set pricing in the config)"] } : {}),
			},
		});
		const run: Run = {
			...newRun({
				runId: ulid(),
				source: "linear",
				issueId: `approve-${ulid()}`,
				issueKey: "ENG-900",
				trigger: "webhook",
				now,
			}),
			title: "A costly change",
			status: "awaiting_approval",
			config,
			steps: [
				{ ...planStep(0), status: "succeeded", usage: [attempt(1, 0.25, 0.01)] },
				{
					...newStep(1, "api"),
					status: "pending",
					attempt: 3,
					usage: [attempt(1, 4.6, 0.11), attempt(2, null, 0.05)],
				},
			],
			approval: {
				requestedAt: now,
				spentUsd: 5.02,
				limitUsd: 5,
				proposedLimitUsd: 15.02,
				steps: [1],
				resume: "running",
			},
		};
		await store.createRun(run);
		const id = run.runId;

		// The list: an active status, and a cost nobody can know said as such, never $0.
		const page = await signedIn();
		await row(page, id).waitFor();
		expect(await row(page, id).locator("td.status .badge").textContent()).toBe("awaiting_approval");
		const listed = row(page, id).locator(".cost .unknown");
		expect(await listed.textContent()).toBe("unknown");
		expect(await listed.getAttribute("title")).toBe(
			"at least $5.02; acme:x1: no price (set pricing in the config)",
		);
		await page.selectOption("#status-filter", "awaiting_approval");
		await expect.poll(() => page.locator("#runs tr[data-run]").count()).toBe(1);

		// Its page: the run's cost, each step's and each attempt's, and the request.
		await page.goto(`${w.url()}/runs/${id}`);
		await page.locator("#approval").waitFor();
		expect(await page.locator("#approval").textContent()).toContain(
			"Waiting for approval: spent $5.02 of $5.00",
		);
		expect(await page.locator("#cost").textContent()).toMatch(
			/^Cost unknown \(at least \$5\.02: acme:x1: no price \(set pricing in the config\)\) · 315k tokens · 15m 0s agent time · limit \$5\.00$/,
		);
		const cost = (n: number) => page.locator("#steps tr").nth(n).locator(".cost");
		expect(await cost(1).textContent()).toBe("$0.26");
		expect(await cost(2).locator(".unknown").first().textContent()).toBe("unknown");
		expect(await cost(2).locator(".attempts").textContent()).toBe("#1 $4.71 · #2 unknown");
		// The read-only token watches; approving is the admin token's, and only it is offered the button.
		expect(await page.locator("#approval").textContent()).toContain(
			"The admin token approves here",
		);
		expect(await page.locator("#approve, #approve-limit").count()).toBe(0);

		// With the admin token the button posts the new limit (answered here: approving is the
		// pipeline's, tested with the endpoint in api.test.ts).
		const posted: { method: string; auth?: string; body: unknown }[] = [];
		await page.route(`**/api/runs/${id}/approve`, (route) => {
			const req = route.request();
			posted.push({
				method: req.method(),
				auth: req.headers().authorization,
				body: JSON.parse(req.postData() ?? "null"),
			});
			return route.fulfill({
				status: 202,
				contentType: "application/json",
				body: JSON.stringify({ id, status: "approving", limitUsd: 20 }),
			});
		});
		await page.evaluate((t) => localStorage.setItem("lisaToken", t), w.stack.apiToken);
		await page.reload();
		await page.locator("#approve-limit").waitFor();
		// A limit that is not an amount is refused on the page, naming what it takes: nothing is posted.
		await page.fill("#approve-limit", "-3");
		await page.click("#approve");
		await expect
			.poll(() => page.locator("#notice.error .text").textContent())
			.toBe("The new limit is an amount in USD, such as 20");
		expect(posted).toEqual([]);
		await page.fill("#approve-limit", "20");
		// The page is drawn again every second while the run is active (its elapsed time moves):
		// what was typed stays.
		const before = await page.locator("#summary").textContent();
		await expect.poll(() => page.locator("#summary").textContent()).not.toBe(before);
		expect(await page.inputValue("#approve-limit")).toBe("20");
		await page.click("#approve");
		await expect
			.poll(() => page.locator("#notice .text").textContent())
			.toBe("Approved: the run goes on up to $20.00.");
		expect(posted).toEqual([
			{ method: "POST", auth: `Bearer ${w.stack.apiToken}`, body: { limitUsd: 20 } },
		]);
		await page.close();
	});

	it("asks again when the stored token is wrong, saying it was refused", async () => {
		const page = await browser.newPage();
		await page.goto(`${w.url()}/`);
		// A first visit asks for a token, and nothing was refused yet.
		await page.locator("#login").waitFor({ state: "visible" });
		expect(await page.locator("#refused").isHidden()).toBe(true);
		await page.evaluate(() => localStorage.setItem("lisaToken", "wrong"));
		await page.reload();
		await page.locator("#login").waitFor({ state: "visible" });
		expect(await page.evaluate(() => localStorage.getItem("lisaToken"))).toBeNull();
		expect(await page.locator("#refused").textContent()).toBe(
			"That token was refused (401): it is not one of this Lisa's tokens. Paste its API token or read token.",
		);
		// A typed wrong token too; then the right one opens the runs.
		await page.fill("#token", "lisa_typed-wrong");
		await page.click("#login button");
		await page.locator("#refused").waitFor({ state: "visible" });
		await page.fill("#token", w.stack?.readToken ?? "");
		await page.click("#login button");
		await row(page, ok).waitFor();
		expect(await page.locator("#refused").isHidden()).toBe(true);
		await page.close();
	});

	it("says when the filters match no run", async () => {
		const page = await signedIn("/?repo=nowhere");
		await expect
			.poll(() => page.locator("#runs td.muted").textContent())
			.toBe("No runs match these filters.");
		await page.close();
	});
});

describe.skipIf(!hasChromium)("the dashboard of a stack without runs", () => {
	let empty: StackWorld;
	beforeAll(async () => {
		empty = await createStackWorld();
	});
	afterAll(() => empty?.stop());

	it("says how to start a run: the webhook URLs, the CLI, the demo", async () => {
		const page = await browser.newPage();
		await page.goto(empty.stack?.signInLink() ?? "");
		const text = page.locator("#runs td.muted");
		await text.waitFor();
		const origin = empty.url();
		expect(await text.textContent()).toBe(
			`No runs yet. To start one, label an issue for Lisa in your tracker, whose webhook points at ${origin}/webhooks/linear, ${origin}/webhooks/trello or ${origin}/webhooks/github; without a public URL, npx lisa run works through the labelled issues; npx lisa plan starts an epic. npm run demo shows three runs without any account (README › Quick start).`,
		);
		expect(await text.locator("code").allTextContents()).toContain("npx lisa run");
		await page.close();
	});
});
