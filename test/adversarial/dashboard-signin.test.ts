import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { SIGN_IN_CODE_TTL_MS, SignInCodes } from "../../src/api/sign-in";
import { readSettings } from "../../src/config/settings";
import { listen } from "../../src/local/claims";
import { apiDeps } from "../../src/runtime/api";
import { hasChromium, launchChromium, launchChromiumProfile } from "../support/browser";
import { type StackProcess, startStackProcess } from "../support/process-stack";
import { createStackWorld, type StackWorld } from "../support/stack";

// The outside review's item 8 (issue 28): the read token in the browser's history. Chromium keeps
// every address it opened, the fragment too, even after the page replaces it. The dashboard link
// `npm start` prints is opened in a real Chromium with its profile on disk: once it is closed, the
// token is in no address it recorded and in no file of the profile but the page's own storage. The
// printed code signs in once; replayed or expired it is refused.

let w: StackWorld;
let lisa: StackProcess;
let browser: Browser;
let profile: string;
/** The dashboard link of `npm start`'s banner. */
let printed: string;
let readToken: string;

beforeAll(async () => {
	w = await createStackWorld({ startStack: false });
	lisa = await startStackProcess(w.env);
	printed = lisa.output().match(/^ {2}dashboard: +(\S+)/m)?.[1] ?? "";
	readToken = (
		await readFile(path.join(w.env.LISA_DATA_DIR as string, "read-token"), "utf8")
	).trim();
	profile = await mkdtemp(path.join(tmpdir(), "lisa-chromium-"));
	if (hasChromium) browser = await launchChromium();
}, 120_000);
afterAll(async () => {
	await browser?.close();
	await lisa?.stop();
	await w?.stop();
	if (profile) await rm(profile, { recursive: true, force: true });
});

const postCode = (url: string, code: string) =>
	fetch(`${url}/dashboard/sign-in`, {
		method: "POST",
		headers: { "content-type": "application/json" },
		body: JSON.stringify({ code }),
	});

/** Every file under `dir`, relative to it. */
async function filesOf(dir: string): Promise<string[]> {
	const entries = await readdir(dir, { recursive: true, withFileTypes: true });
	return entries
		.filter((e) => e.isFile())
		.map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe.skipIf(!hasChromium)("signing in to the dashboard from the printed link", () => {
	it("signs in, and the browser keeps the token in no address, history or session", async () => {
		expect(printed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#code=[\w-]{32}$/);
		expect(printed).not.toContain(readToken);
		expect(printed).not.toContain(lisa.token);

		const chromium = await launchChromiumProfile(profile);
		const addresses: string[] = [];
		chromium.on("request", (r) => addresses.push(r.url()));
		const page = chromium.pages()[0] ?? (await chromium.newPage());
		page.on("framenavigated", (f) => addresses.push(f.url()));
		await page.goto(printed);
		// Signed in: the page reads the API (the stats) and never asked for a token.
		await expect.poll(() => page.locator("#where").textContent(), { timeout: 15_000 }).toBe("runs");
		await page.locator("#stats .stat").first().waitFor();
		expect(await page.locator("#login").isHidden()).toBe(true);
		expect(page.url()).toBe(`${lisa.url}/`);

		// What the tab's own history holds: the address as typed, and as it is now.
		const cdp = await chromium.newCDPSession(page);
		const { entries } = await cdp.send("Page.getNavigationHistory");
		expect(entries.map((e) => e.url)).toContain(`${lisa.url}/`);
		addresses.push(...entries.flatMap((e) => [e.url, e.userTypedURL]));
		expect(addresses.filter((a) => a.includes(readToken))).toEqual([]);
		await chromium.close();

		// The profile on disk: History recorded the visit, and no file but the page's storage (where
		// the dashboard keeps its token, as after a pasted one) holds the token.
		const history = await readFile(path.join(profile, "Default", "History"));
		expect(history.includes(`${lisa.url}/`)).toBe(true);
		const files = await filesOf(profile);
		expect(files.length).toBeGreaterThan(20);
		const holding: string[] = [];
		for (const file of files.filter((f) => !f.startsWith(path.join("Default", "Local Storage"))))
			if ((await readFile(path.join(profile, file))).includes(readToken)) holding.push(file);
		expect(holding).toEqual([]);
	});

	it("refuses the printed code replayed, at the API (401) and in a browser (the form says why)", async () => {
		const code = new URL(printed).hash.replace(/^#code=/, "");
		expect(code).not.toBe("");
		const res = await postCode(lisa.url, code);
		expect(res.status).toBe(401);
		expect(await res.text()).not.toContain(readToken);

		const page = await browser.newPage();
		await page.goto(printed);
		await page.locator("#spent").waitFor();
		expect(await page.locator("#login").isVisible()).toBe(true);
		expect(await page.evaluate(() => localStorage.getItem("lisaToken"))).toBeNull();
		expect(page.url()).toBe(`${lisa.url}/`);
		await page.close();
	});

	it("takes no token from a link: `#token=` (what the demo printed) does not sign in", async () => {
		const page = await browser.newPage();
		await page.goto(`${lisa.url}/#token=${readToken}`);
		// Settled: asking for a token, or signed in (the stats drawn).
		await page.locator("#login:visible, #stats .stat").first().waitFor();
		expect(await page.evaluate(() => localStorage.getItem("lisaToken"))).toBeNull();
		expect(await page.locator("#login").isVisible()).toBe(true);
		await page.close();
	});
});

describe("a sign-in code", () => {
	// The app of a stack whose clock the test moves, over real HTTP.
	let now = Date.parse("2025-01-01T00:00:00Z");
	const codes = new SignInCodes(() => now);
	const tokens = { LISA_API_TOKEN: "lisa_admin-token", LISA_READ_TOKEN: "lisa_read-token" };
	let url: string;
	let close: () => void;
	beforeAll(async () => {
		const app = createApp({
			...apiDeps(readSettings({ ...w.env, ...tokens })),
			signInCodes: codes,
		});
		const server = await listen(0, app.fetch);
		const address = server.address();
		url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
		close = () => server.close();
	});
	afterAll(() => close?.());

	it("works once, however many tries race for it", async () => {
		const code = codes.issue();
		const answers = await Promise.all(Array.from({ length: 20 }, () => postCode(url, code)));
		expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(401)]);
		const won = answers.find((r) => r.status === 200);
		expect(await won?.json()).toEqual({ token: tokens.LISA_READ_TOKEN });
		expect(won?.headers.get("cache-control")).toBe("no-store");
	});

	it("works only within its lifetime", async () => {
		const early = codes.issue();
		const late = codes.issue();
		now += SIGN_IN_CODE_TTL_MS - 1;
		expect((await postCode(url, early)).status).toBe(200);
		now += 1;
		const expired = await postCode(url, late);
		expect(expired.status).toBe(401);
		expect(await expired.json()).toEqual({ error: expect.stringMatching(/has expired/) });
	});

	it("is refused when made up, malformed, or not sent as JSON", async () => {
		const code = codes.issue();
		const other = `${code.slice(0, -1)}${code.endsWith("A") ? "B" : "A"}`;
		expect((await postCode(url, other)).status).toBe(401);
		expect((await postCode(url, "x".repeat(200))).status).toBe(401);
		const form = await fetch(`${url}/dashboard/sign-in`, {
			method: "POST",
			headers: { "content-type": "application/x-www-form-urlencoded" },
			body: `code=${code}`,
		});
		expect(form.status).toBe(415);
		// None of these spent it.
		expect((await postCode(url, code)).status).toBe(200);
	});
});
