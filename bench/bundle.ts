import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { LAMBDA_RUNTIME } from "../infra/config";
import { writeResult } from "./results";
import { bundleLikeSst, outputOf } from "./sst-esbuild";

// Bundle check: each Lambda entry point bundled the way SST bundles it for deploy (esbuild options of
// SST's node runtime, pkg/runtime/node/build.go), its size, what fills it, and the time a fresh
// Node process takes to import it (the module part of a cold start). Prints a table, writes JSON.

const ROOT = path.resolve(import.meta.dirname ?? ".", "..");
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 7);
/**
 * The API answers webhooks (Linear wants 200 within 5 s) and starts cold after idle periods: its
 * bundle and its cold import (the median) stay under these, so a dependency that balloons or a
 * client the API does not run is noticed (exit code 1). docs/development.md › Commands.
 */
const API_BUDGET_BYTES = Number(process.env.BENCH_API_BUDGET_KB ?? 1024) * 1024;
const API_IMPORT_BUDGET_MS = Number(process.env.BENCH_API_IMPORT_BUDGET_MS ?? 100);

interface Row {
	fn: string;
	bytes: number;
	gzipBytes: number;
	modules: number;
	largest: { pkg: string; bytes: number }[];
	importMs: { median: number; min: number; max: number };
}

/** Bytes of one output per npm package (or "lisa" for our own code). */
function byPackage(output: Metafile["outputs"][string]): { pkg: string; bytes: number }[] {
	const sizes = new Map<string, number>();
	for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
		const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
		const pkg = m?.[1] ?? "lisa";
		sizes.set(pkg, (sizes.get(pkg) ?? 0) + bytesInOutput);
	}
	return [...sizes].map(([pkg, bytes]) => ({ pkg, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** Milliseconds a fresh Node process spends importing the bundle. */
function importTime(file: string): number {
	const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
	const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
		env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
		encoding: "utf8",
	});
	return Number(out);
}

const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;

async function main(): Promise<void> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-bundle-"));
	const files = (await readdir(path.join(ROOT, "src", "functions"))).filter((f) =>
		f.endsWith(".ts"),
	);
	const entries = Object.fromEntries(
		files.sort().map((f) => [path.basename(f, ".ts"), path.join(ROOT, "src", "functions", f)]),
	);
	const { outfiles, metafile } = await bundleLikeSst(entries, dir, LAMBDA_RUNTIME);
	const rows: Row[] = [];
	for (const [fn, outfile] of Object.entries(outfiles)) {
		const output = outputOf(metafile, outfile);
		const times: number[] = [];
		for (let i = 0; i < RUNS; i++) times.push(importTime(outfile));
		times.sort((a, b) => a - b);
		rows.push({
			fn,
			bytes: (await stat(outfile)).size,
			gzipBytes: gzipSync(await readFile(outfile)).length,
			modules: Object.keys(output.inputs).length,
			largest: byPackage(output).slice(0, 4),
			importMs: {
				median: times[Math.floor(times.length / 2)] ?? Number.NaN,
				min: times[0] ?? Number.NaN,
				max: times[times.length - 1] ?? Number.NaN,
			},
		});
	}

	console.log(
		`\nLambda bundles (esbuild as SST bundles for ${LAMBDA_RUNTIME}: ESM, minified), cold import over ${RUNS} fresh processes, Node ${process.version}, ${os.cpus().length} cores\n`,
	);
	console.log(
		"| function | bundle | gzip | modules | import ms (median, min–max) | largest parts |",
	);
	console.log("|---|---:|---:|---:|---:|---|");
	for (const r of rows)
		console.log(
			`| ${r.fn} | ${kb(r.bytes)} | ${kb(r.gzipBytes)} | ${r.modules} | ${r.importMs.median.toFixed(0)} (${r.importMs.min.toFixed(0)}–${r.importMs.max.toFixed(0)}) | ${r.largest.map((l) => `${l.pkg} ${kb(l.bytes)}`).join(", ")} |`,
		);
	const apiRow = rows.find((r) => r.fn === "api");
	const sizeOk = apiRow ? apiRow.bytes <= API_BUDGET_BYTES : false;
	const importOk = apiRow ? apiRow.importMs.median <= API_IMPORT_BUDGET_MS : false;
	const verdict = (ok: boolean) => (ok ? "within" : "OVER");
	console.log(
		`\nAPI bundle ${apiRow ? kb(apiRow.bytes) : "missing"}: ${verdict(sizeOk)} the ${kb(API_BUDGET_BYTES)} budget.` +
			`\nAPI cold import ${apiRow ? `${apiRow.importMs.median.toFixed(0)} ms` : "missing"} (median): ${verdict(importOk)} the ${API_IMPORT_BUDGET_MS} ms budget.\n`,
	);

	await writeResult("bundle", {
		runtime: LAMBDA_RUNTIME,
		importRuns: RUNS,
		apiBudgetBytes: API_BUDGET_BYTES,
		apiImportBudgetMs: API_IMPORT_BUDGET_MS,
		rows,
	});
	await rm(dir, { recursive: true, force: true });
	if (!sizeOk || !importOk) process.exitCode = 1;
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
