import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The layers of docs/architecture.md are enforced by Biome (biome.json › overrides). Each case plants
// a file that crosses (or keeps to) a boundary and lints it with the project's own config, so a rule
// that stops biting fails here.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIOME = path.join(ROOT, "node_modules", ".bin", "biome");

interface Probe {
	/** Where the planted file sits, under the repository root. */
	file: string;
	/** What it imports. */
	imports: string;
	/** The rule that must refuse it, or undefined when the import is allowed. */
	refusedBy?: "noRestrictedImports" | "noImportCycles";
}

const crossing: Probe[] = [
	{ file: "src/domain/probe.ts", imports: "octokit", refusedBy: "noRestrictedImports" },
	{ file: "src/domain/probe.ts", imports: "hono", refusedBy: "noRestrictedImports" },
	{ file: "src/domain/probe.ts", imports: "@aws-sdk/client-sqs", refusedBy: "noRestrictedImports" },
	{ file: "src/domain/probe.ts", imports: "../store", refusedBy: "noRestrictedImports" },
	{ file: "src/domain/probe.ts", imports: "../log", refusedBy: "noRestrictedImports" },
	{ file: "src/pipeline/probe.ts", imports: "../store/dynamo", refusedBy: "noRestrictedImports" },
	{ file: "src/api/probe.ts", imports: "../store/dynamo/runs", refusedBy: "noRestrictedImports" },
	{ file: "src/api/probe.ts", imports: "../task/main", refusedBy: "noRestrictedImports" },
	{ file: "src/pipeline/probe.ts", imports: "../cli/main", refusedBy: "noRestrictedImports" },
	{ file: "src/store/probe.ts", imports: "../pipeline/deps", refusedBy: "noRestrictedImports" },
	{
		file: "src/integrations/probe.ts",
		imports: "../pipeline/mutate",
		refusedBy: "noRestrictedImports",
	},
	{ file: "src/task/probe.ts", imports: "../pipeline/steps", refusedBy: "noRestrictedImports" },
	{ file: "src/task/probe.ts", imports: "../runtime/deps", refusedBy: "noRestrictedImports" },
	{ file: "src/task/probe.ts", imports: "../local/stack", refusedBy: "noRestrictedImports" },
	{ file: "src/config/probe.ts", imports: "../launcher/ecs", refusedBy: "noRestrictedImports" },
	{ file: "src/runtime/probe.ts", imports: "../../infra/config", refusedBy: "noRestrictedImports" },
	{
		file: "src/api/probe.ts",
		imports: "../../test/support/world",
		refusedBy: "noRestrictedImports",
	},
	{ file: "infra/probe.ts", imports: "../src/pipeline/sweeper", refusedBy: "noRestrictedImports" },
];

const keeping: Probe[] = [
	{ file: "src/domain/probe.ts", imports: "./run" },
	{ file: "src/domain/probe.ts", imports: "../config/schema" },
	{ file: "src/pipeline/probe.ts", imports: "../store" },
	{ file: "src/task/probe.ts", imports: "../runtime/aws" },
	{ file: "src/task/probe.ts", imports: "../store" },
	{ file: "src/runtime/probe.ts", imports: "../store/dynamo" },
	{ file: "infra/probe.ts", imports: "../src/config/links" },
];

const planted = new Map<string, Probe>();

/** Lints the planted files together; the rules each file broke. */
async function lint(files: string[]): Promise<Map<string, string[]>> {
	const run = promisify(execFile)(
		BIOME,
		["lint", "--reporter=json", "--max-diagnostics=none", ...files],
		{
			cwd: ROOT,
			maxBuffer: 16 << 20,
		},
	).catch((e: { stdout: string }) => e);
	const { stdout } = await run;
	const report = JSON.parse(stdout) as {
		diagnostics: { category: string; location: { path: { file: string } | string } }[];
	};
	const broke = new Map<string, string[]>();
	for (const d of report.diagnostics) {
		const loc = d.location.path;
		const file = typeof loc === "string" ? loc : loc.file;
		broke.set(file, [...(broke.get(file) ?? []), d.category.split("/").at(-1) ?? ""]);
	}
	return broke;
}

let broke: Map<string, string[]>;

beforeAll(async () => {
	const all = [...crossing, ...keeping];
	await Promise.all(
		all.map(async (p, i) => {
			const file = p.file.replace(/probe\.ts$/, `probe-${i}.ts`);
			planted.set(file, p);
			await writeFile(
				path.join(ROOT, file),
				`import * as probe from "${p.imports}";\nexport { probe };\n`,
			);
		}),
	);
	// Two planted files that import each other: a cycle.
	await writeFile(
		path.join(ROOT, "src/domain/probe-cycle-a.ts"),
		'export * from "./probe-cycle-b";\nexport const a = 1;\n',
	);
	await writeFile(
		path.join(ROOT, "src/domain/probe-cycle-b.ts"),
		'export * from "./probe-cycle-a";\nexport const b = 1;\n',
	);
	broke = await lint([
		...planted.keys(),
		"src/domain/probe-cycle-a.ts",
		"src/domain/probe-cycle-b.ts",
	]);
}, 60_000);

afterAll(async () => {
	await Promise.all(
		[...planted.keys(), "src/domain/probe-cycle-a.ts", "src/domain/probe-cycle-b.ts"].map((f) =>
			rm(path.join(ROOT, f), { force: true }),
		),
	);
});

describe("the layers (docs/architecture.md › Layers)", () => {
	it.each(crossing.map((p, i) => [p.file, p.imports, i] as const))(
		"refuses %s importing %s",
		(file, _imports, i) => {
			const planted = file.replace(/probe\.ts$/, `probe-${i}.ts`);
			expect(broke.get(planted)).toContain("noRestrictedImports");
		},
	);

	it.each(keeping.map((p, i) => [p.file, p.imports, crossing.length + i] as const))(
		"lets %s import %s",
		(file, _imports, i) => {
			const planted = file.replace(/probe\.ts$/, `probe-${i}.ts`);
			expect(broke.get(planted) ?? []).not.toContain("noRestrictedImports");
		},
	);

	it("refuses an import cycle", () => {
		expect(broke.get("src/domain/probe-cycle-a.ts")).toContain("noImportCycles");
	});
});
