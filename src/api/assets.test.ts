import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { API_FILES, DASHBOARD_MODULES } from "../config/links";
import {
	DASHBOARD_JS,
	HTM_JS,
	HTM_VERSION,
	moduleUrl,
	PAGE_MODULES,
	PREACT_JS,
	PREACT_VERSION,
	SERVED,
} from "./assets";

// The dashboard's modules are served as files and copied beside the API's bundle by the deploy
// (src/config/links.ts › DASHBOARD_MODULES): the list must hold every module the page loads, or the
// deployed page breaks where the sources' works. Its imports are followed here from the entry.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** What a module imports (its static and dynamic imports; never its comments' JSDoc types). */
const importsOf = (file: string) =>
	ts.preProcessFile(read(file), true, true).importedFiles.map((f) => f.fileName);

/** Every module reached from the entry, and what they import from elsewhere. */
function graph(entry: string) {
	const modules = new Set<string>();
	const elsewhere = new Set<string>();
	const visit = (file: string) => {
		if (modules.has(file)) return;
		modules.add(file);
		for (const spec of importsOf(file)) {
			if (spec.startsWith("./") || spec.startsWith("../"))
				visit(path.posix.join(path.posix.dirname(file), spec));
			else elsewhere.add(spec);
		}
	};
	visit(entry);
	return { modules, elsewhere };
}

describe("the dashboard's modules", () => {
	const { modules, elsewhere } = graph(DASHBOARD_MODULES[0]);

	it("are every module the page loads from its entry, and nothing else", () => {
		expect([...modules].sort()).toEqual([...DASHBOARD_MODULES].sort());
		expect(DASHBOARD_JS).toBe("/js/dashboard/main.js");
	});

	it("import nothing but each other, the domain's shared modules and the libraries served", () => {
		expect([...elsewhere].sort()).toEqual([HTM_JS, PREACT_JS].sort());
		for (const file of modules) expect(file).toMatch(/^src\/(dashboard|domain)\/[\w-]+\.js$/);
	});

	it("share the server's step numbering: the domain's module itself", () => {
		expect(modules).toContain("src/domain/step-label.js");
		expect(SERVED[moduleUrl("src/domain/step-label.js")]?.file).toBe("src/domain/step-label.js");
	});

	it("are all served, preloaded by the page and copied by the deploy", () => {
		for (const file of DASHBOARD_MODULES) {
			expect(SERVED[moduleUrl(file)]?.file).toBe(file);
			expect(PAGE_MODULES).toContain(moduleUrl(file));
		}
		expect(
			Object.values(SERVED)
				.map((s) => s.file)
				.sort(),
		).toEqual([...API_FILES].sort());
	});
});

describe("the dashboard's libraries", () => {
	it("are served at the versions package.json pins, the ones installed", () => {
		const pinned = (JSON.parse(read("package.json")) as { dependencies: Record<string, string> })
			.dependencies;
		const installed = (name: string) =>
			(JSON.parse(read(`node_modules/${name}/package.json`)) as { version: string }).version;
		expect([pinned.preact, installed("preact")]).toEqual([PREACT_VERSION, PREACT_VERSION]);
		expect([pinned.htm, installed("htm")]).toEqual([HTM_VERSION, HTM_VERSION]);
		expect(SERVED[PREACT_JS]?.file).toBe("node_modules/preact/dist/preact.mjs");
		expect(SERVED[HTM_JS]?.file).toBe("node_modules/htm/dist/htm.mjs");
	});
});
