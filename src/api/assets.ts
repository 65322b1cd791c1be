import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Hono } from "hono";
import { API_PACKAGE_FILES, DASHBOARD_MODULES } from "../config/links";

// The dashboard's code, served from files as they are: no CDN, no build step. Its ES modules
// (src/dashboard, and the domain's modules it shares with the server) under /js/, and its libraries
// from their packages under /assets/ at their versions: uPlot (a script of its own), preact and htm
// (ES modules). None is in the API's bundle (its 1 MB budget, docs/development.md › Commands): the
// deploy copies each file beside the bundle at its path from the repository's root (infra/api.ts,
// API_FILES), where the API finds it as it does in the sources, the first one up from its own
// folder (as Node finds node_modules).

/** uPlot's version, in the path so a new one is a new URL (test/e2e/api.test.ts holds it to the package's). */
export const UPLOT_VERSION = "1.6.32";
/** preact's and htm's versions: src/dashboard/html.js imports them at these paths. */
export const PREACT_VERSION = "11.2.0";
export const HTM_VERSION = "3.1.1";

export const UPLOT_JS = `/assets/uplot-${UPLOT_VERSION}.min.js`;
export const UPLOT_CSS = `/assets/uplot-${UPLOT_VERSION}.min.css`;
export const PREACT_JS = `/assets/preact-${PREACT_VERSION}.mjs`;
export const HTM_JS = `/assets/htm-${HTM_VERSION}.mjs`;

/**
 * A dashboard module's URL: its path under src/, below /js/. A module's relative imports are
 * then its URL's (`../domain/step-label.js` from /js/dashboard/ is /js/domain/step-label.js).
 */
export const moduleUrl = (file: string) => `/js/${file.replace(/^src\//, "")}`;

/** The page's script, which imports the rest. */
export const DASHBOARD_JS = moduleUrl(DASHBOARD_MODULES[0]);

const JS = "text/javascript; charset=utf-8";
/** A versioned URL never changes: browsers keep it a year without asking again. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** A module's URL stays as its text changes: browsers ask each time, and are told it did not change. */
const REVALIDATE = "no-cache";

/** Every URL served from a file, with the file's path from the repository's root. */
export const SERVED: Readonly<Record<string, { file: string; type: string; cache: string }>> = {
	[UPLOT_JS]: { file: `node_modules/${API_PACKAGE_FILES.uplotJs}`, type: JS, cache: IMMUTABLE },
	[UPLOT_CSS]: {
		file: `node_modules/${API_PACKAGE_FILES.uplotCss}`,
		type: "text/css; charset=utf-8",
		cache: IMMUTABLE,
	},
	[PREACT_JS]: { file: `node_modules/${API_PACKAGE_FILES.preact}`, type: JS, cache: IMMUTABLE },
	[HTM_JS]: { file: `node_modules/${API_PACKAGE_FILES.htm}`, type: JS, cache: IMMUTABLE },
	...Object.fromEntries(
		DASHBOARD_MODULES.map((file) => [moduleUrl(file), { file, type: JS, cache: REVALIDATE }]),
	),
};

/** The ES modules the page loads (its own and preact's and htm's): preloaded together by the page. */
export const PAGE_MODULES = [...DASHBOARD_MODULES.map(moduleUrl), PREACT_JS, HTM_JS];

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** `file` in this module's folder or the nearest one above it: the sources' root, or the bundle's. */
function locate(file: string): string {
	for (let dir = HERE; ; dir = path.dirname(dir)) {
		const at = path.join(dir, file);
		if (existsSync(at)) return at;
		if (path.dirname(dir) === dir) throw new Error(`${file} is not beside ${HERE} nor above it`);
	}
}

/** Serves the files (no token: they are public code), each read once, on its first request. */
export function assetRoutes(app: Hono): void {
	const read = new Map<string, Promise<{ bytes: Uint8Array<ArrayBuffer>; etag: string }>>();
	for (const [url, { file, type, cache }] of Object.entries(SERVED))
		app.get(url, async (c) => {
			let served = read.get(url);
			if (!served) {
				served = (async () => {
					const bytes = new Uint8Array(await readFile(locate(file)));
					const etag = `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;
					return { bytes, etag };
				})();
				read.set(url, served);
				// A failed read (a deploy without the files) is tried again on the next request.
				served.catch(() => read.delete(url));
			}
			const { bytes, etag } = await served;
			const headers = { "content-type": type, "cache-control": cache, etag };
			if (c.req.header("if-none-match") === etag) return c.body(null, 304, headers);
			return c.body(bytes, 200, headers);
		});
}
