import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { startDemo } from "./demo/scenario";
import { hasChromium, launchChromium } from "./support/browser";

// `npm run screenshots` (docs/development.md › The dashboard's browser test and screenshots): the
// dashboard guide's pictures, taken from the demo's runs (test/demo/scenario.ts) in Debian's
// Chromium — docs/dashboard.png (the runs list) and docs/dashboard-run.png (the multi-repo run's
// page). Run it again whenever the dashboard changes.

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const DOCS = fileURLToPath(new URL("../docs/", import.meta.url));
const VIEWPORT = { width: 1280, height: 720 };

if (!hasChromium) {
	console.error(
		"npm run screenshots needs Chromium: `apt-get install chromium` (/usr/bin/chromium), or set CHROMIUM_PATH",
	);
	process.exit(1);
}

const stop = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const)
	process.once(signal, () => stop.abort(new Error(`stopped by ${signal}`)));

/** Waits until the page shows each text (the dashboard renders what the API answers). */
async function shows(page: Page, texts: string[]): Promise<void> {
	for (const text of texts) await page.getByText(text, { exact: false }).first().waitFor();
}

const demo = await startDemo((line) => console.log(line), { signal: stop.signal });
const browser = await launchChromium();
try {
	const page = await browser.newPage({ viewport: VIEWPORT });
	// The wall screen's way in: the read-only token, asked once
	// (docs/dashboard.md › What the token decides).
	await page.goto(`${demo.url}/`);
	await page.locator("#login").waitFor();
	await page.fill("#token", demo.readToken);
	await page.click("#login button");
	await shows(
		page,
		demo.runs.map(({ run }) => run.title ?? run.id),
	);
	await page.screenshot({ path: `${DOCS}dashboard.png`, fullPage: true });
	console.log("wrote docs/dashboard.png");

	const multi = demo.runs.find(({ run }) => run.prUrls.length > 1)?.run;
	if (!multi) throw new Error("the demo has no multi-repo run");
	await page.goto(`${demo.url}/runs/${multi.id}`);
	await shows(page, [...multi.prUrls, "run.succeeded"]);
	await page.screenshot({ path: `${DOCS}dashboard-run.png`, fullPage: true });
	console.log("wrote docs/dashboard-run.png");
} finally {
	await browser.close();
	await demo.world.stop();
}
