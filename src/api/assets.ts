import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Hono } from "hono";
import { API_PACKAGE_FILES } from "../config/links";

// The dashboard's charting library (uPlot, a dependency), served from the package: no CDN, no build
// step. The files stay out of the API's bundle (its 1 MB budget, docs/development.md › Commands):
// the deploy copies them next to it (infra/api.ts, API_PACKAGE_FILES), where the same resolve finds
// them.

/** uPlot's version, in the path so a new one is a new URL (test/e2e/api.test.ts holds it to the package's). */
export const UPLOT_VERSION = "1.6.32";

export const UPLOT_JS = `/assets/uplot-${UPLOT_VERSION}.min.js`;
export const UPLOT_CSS = `/assets/uplot-${UPLOT_VERSION}.min.css`;

const ASSETS = {
	[UPLOT_JS]: {
		file: API_PACKAGE_FILES.uplotJs,
		type: "text/javascript; charset=utf-8",
	},
	[UPLOT_CSS]: {
		file: API_PACKAGE_FILES.uplotCss,
		type: "text/css; charset=utf-8",
	},
} as const;

/** A versioned URL never changes: browsers keep it a year without asking again. */
const IMMUTABLE = "public, max-age=31536000, immutable";

/** Serves the assets (no token: they are public code), each read once, on its first request. */
export function assetRoutes(app: Hono): void {
	const require = createRequire(import.meta.url);
	const read = new Map<string, Promise<Buffer>>();
	for (const [path, { file, type }] of Object.entries(ASSETS))
		app.get(path, async (c) => {
			let bytes = read.get(path);
			if (!bytes) {
				bytes = readFile(require.resolve(file));
				read.set(path, bytes);
				// A failed read (a deploy without the files) is tried again on the next request.
				bytes.catch(() => read.delete(path));
			}
			return c.body(new Uint8Array(await bytes), 200, {
				"content-type": type,
				"cache-control": IMMUTABLE,
			});
		});
}
