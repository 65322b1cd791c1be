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
	/** The names it imports (`{ a, type B }`); the whole module when absent. */
	names?: string;
}

/** Imports the rules must refuse (noRestrictedImports). */
const crossing: Probe[] = [
	{ file: "src/domain/probe.ts", imports: "octokit" },
	{ file: "src/domain/probe.ts", imports: "hono" },
	{ file: "src/domain/probe.ts", imports: "@aws-sdk/client-sqs" },
	{ file: "src/domain/probe.ts", imports: "../store" },
	{ file: "src/domain/probe.ts", imports: "../log" },
	{ file: "src/pipeline/probe.ts", imports: "../store/dynamo" },
	{ file: "src/api/probe.ts", imports: "../store/dynamo/runs" },
	{ file: "src/api/probe.ts", imports: "../task/main" },
	{ file: "src/pipeline/probe.ts", imports: "../cli/main" },
	{ file: "src/store/probe.ts", imports: "../pipeline/deps" },
	{ file: "src/integrations/probe.ts", imports: "../pipeline/mutate" },
	{ file: "src/task/probe.ts", imports: "../pipeline/steps" },
	{ file: "src/task/probe.ts", imports: "../runtime/deps" },
	{ file: "src/task/probe.ts", imports: "../local/stack" },
	{ file: "src/config/probe.ts", imports: "../launcher/ecs" },
	{ file: "src/runtime/probe.ts", imports: "../../infra/config" },
	{ file: "src/api/probe.ts", imports: "../../test/support/world" },
	{ file: "infra/probe.ts", imports: "../src/pipeline/sweeper" },
	{ file: "src/pipeline/probe.ts", imports: "../integrations/linear/session" },
	{ file: "src/pipeline/probe.ts", imports: "../integrations/trello/client" },
	{ file: "src/domain/probe.ts", imports: "../queue/messages", names: "{ stepFinished }" },
	{ file: "src/domain/probe.ts", imports: "../queue/messages", names: "{ eventMessageSchema }" },
	// The task's layers, top to bottom: attempt → steps → context → agents → egress → broker →
	// sandbox → prompts → report.
	{ file: "src/task/steps/probe.ts", imports: "../attempt/execute" },
	{ file: "src/task/context/probe.ts", imports: "../steps/implement-and-check" },
	{ file: "src/task/agents/probe.ts", imports: "../context/attempt" },
	{ file: "src/task/agents/providers/probe.ts", imports: "../../steps/check" },
	{ file: "src/task/agents/builtin/probe.ts", imports: "../providers/index" },
	{ file: "src/task/egress/probe.ts", imports: "../agents/chain" },
	{ file: "src/task/broker/probe.ts", imports: "../egress/proxy" },
	{ file: "src/task/sandbox/probe.ts", imports: "../attempt/step" },
	{ file: "src/task/sandbox/probe.ts", imports: "../broker/broker" },
	{ file: "src/task/prompts/probe.ts", imports: "../sandbox/process" },
	{ file: "src/task/report/probe.ts", imports: "../prompts/prompt" },
	{ file: "src/task/sandbox/probe.ts", imports: "../../pipeline/steps" },
	// The dashboard runs in the browser: its own modules, the domain's shared ones, /assets.
	{ file: "src/dashboard/probe.js", imports: "../domain/run" },
	{ file: "src/dashboard/probe.js", imports: "../api/schemas" },
	{ file: "src/dashboard/probe.js", imports: "preact" },
	{ file: "src/dashboard/probe.js", imports: "https://esm.sh/preact" },
];

/** Imports the rules must allow. */
const keeping: Probe[] = [
	{ file: "src/domain/probe.ts", imports: "./run" },
	{ file: "src/domain/probe.ts", imports: "../config/schema" },
	{ file: "src/pipeline/probe.ts", imports: "../store" },
	{ file: "src/task/probe.ts", imports: "../runtime/aws" },
	{ file: "src/task/probe.ts", imports: "../store" },
	{ file: "src/runtime/probe.ts", imports: "../store/dynamo" },
	{ file: "infra/probe.ts", imports: "../src/config/links" },
	{ file: "infra/probe.ts", imports: "../src/config/egress" },
	{ file: "src/domain/probe.ts", imports: "../queue/messages", names: "{ type StepFinished }" },
	{ file: "src/pipeline/probe.ts", imports: "../integrations/tracker" },
	{ file: "src/task/steps/probe.ts", imports: "../context/attempt" },
	{ file: "src/task/agents/providers/probe.ts", imports: "../builtin/agent" },
	{ file: "src/task/egress/probe.ts", imports: "../broker/broker" },
	{ file: "src/task/sandbox/probe.ts", imports: "../report/failure" },
	{ file: "src/task/report/probe.ts", imports: "../../store" },
	{ file: "src/dashboard/probe.js", imports: "./format.js" },
	{ file: "src/dashboard/probe.js", imports: "../domain/step-label.js" },
	{ file: "src/dashboard/probe.js", imports: "/assets/preact-11.2.0.mjs" },
];

/** Each probe with the file it is planted as: its `file` numbered, so that no two collide. */
const plant = (probes: Probe[], from: number) =>
	probes.map((p, i) => ({
		...p,
		planted: p.file.replace(/probe\.(ts|js)$/, (_, ext) => `probe-${from + i}.${ext}`),
	}));
const refused = plant(crossing, 0);
const allowed = plant(keeping, crossing.length);

/** Two planted files that import each other: a cycle. */
const CYCLE_A = "src/domain/probe-cycle-a.ts";
const cycle = {
	[CYCLE_A]: 'export * from "./probe-cycle-b";\nexport const a = 1;\n',
	"src/domain/probe-cycle-b.ts": 'export * from "./probe-cycle-a";\nexport const b = 1;\n',
};

/** Every planted file and its text. */
const files: Record<string, string> = {
	...Object.fromEntries(
		[...refused, ...allowed].map((p) => [
			p.planted,
			p.names
				? `import ${p.names} from "${p.imports}";\n`
				: `import * as probe from "${p.imports}";\nexport { probe };\n`,
		]),
	),
	...cycle,
};

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
	await Promise.all(
		Object.entries(files).map(([file, text]) => writeFile(path.join(ROOT, file), text)),
	);
	broke = await lint(Object.keys(files));
}, 60_000);

afterAll(async () => {
	await Promise.all(Object.keys(files).map((f) => rm(path.join(ROOT, f), { force: true })));
});

describe("the layers (docs/architecture.md › Layers)", () => {
	it.each(refused.map((p) => [p.file, p.imports, p.planted] as const))(
		"refuses %s importing %s",
		(_file, _imports, planted) => {
			expect(broke.get(planted)).toContain("noRestrictedImports");
		},
	);

	it.each(allowed.map((p) => [p.file, p.imports, p.planted] as const))(
		"lets %s import %s",
		(_file, _imports, planted) => {
			expect(broke.get(planted) ?? []).not.toContain("noRestrictedImports");
		},
	);

	it("refuses an import cycle", () => {
		expect(broke.get(CYCLE_A)).toContain("noImportCycles");
	});
});
