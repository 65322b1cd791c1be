import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { FUNCTIONS, LAMBDA_RUNTIME } from "../infra/config";
import { writeResult } from "./results";
import { bundleLikeSst, loadedAtImport } from "./sst-esbuild";

// Bundle check: each Lambda entry point bundled the way SST bundles it for deploy (esbuild options of
// SST's node runtime, pkg/runtime/node/build.go), its size, what fills it, and the time a fresh
// Node process takes to import it (the module part of a cold start). Prints a table, writes JSON.

const ROOT = path.resolve(import.meta.dirname ?? ".", "..");
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 7);
/** The reference row: bench/kept-packages.ts, the packages the API is built on, alone. */
const KEPT = "kept-packages";
/**
 * The API answers webhooks (Linear wants 200 within 5 s) and starts cold after idle periods: its
 * bundle and its cold import (the median) stay under these, so a dependency that balloons or a
 * client the API does not run is noticed (exit code 1). docs/development.md › Commands.
 */
const API_BUDGET_BYTES = Number(process.env.BENCH_API_BUDGET_KB ?? 1024) * 1024;
const API_IMPORT_BUDGET_MS = Number(process.env.BENCH_API_IMPORT_BUDGET_MS ?? 100);

interface Row {
	fn: string;
	/** What a cold start loads: the bundle and the chunks it imports statically. */
	bytes: number;
	/** Chunks loaded only when a code path imports them (a function that splits). */
	lazyBytes: number;
	gzipBytes: number;
	modules: number;
	largest: { pkg: string; bytes: number }[];
	importMs: { median: number; min: number; max: number };
}

/** Bytes of some outputs per npm package (or "lisa" for our own code). */
function byPackage(outputs: Metafile["outputs"][string][]): { pkg: string; bytes: number }[] {
	const sizes = new Map<string, number>();
	for (const [input, { bytesInOutput }] of outputs.flatMap((o) => Object.entries(o.inputs))) {
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

/** One function's row: what its cold start loads, and how long a fresh process takes to import it. */
async function measure(fn: string, outfile: string, metafile: Metafile): Promise<Row> {
	const loaded = loadedAtImport(metafile, outfile);
	const own = path.dirname(outfile) + path.sep;
	const all = Object.keys(metafile.outputs).filter(
		(o) => o.endsWith(".mjs") && path.resolve(o).startsWith(own),
	);
	const size = async (files: string[]) =>
		(await Promise.all(files.map((f) => stat(path.resolve(f))))).reduce((n, s) => n + s.size, 0);
	const bytes = await size(loaded);
	const times: number[] = [];
	for (let i = 0; i < RUNS; i++) times.push(importTime(outfile));
	times.sort((a, b) => a - b);
	const text = Buffer.concat(await Promise.all(loaded.map((f) => readFile(path.resolve(f)))));
	return {
		fn,
		bytes,
		lazyBytes: (await size(all)) - bytes,
		gzipBytes: gzipSync(text).length,
		modules: loaded.reduce((n, f) => n + Object.keys(metafile.outputs[f]?.inputs ?? {}).length, 0),
		largest: byPackage(loaded.flatMap((f) => metafile.outputs[f] ?? [])).slice(0, 4),
		importMs: {
			median: times[Math.floor(times.length / 2)] ?? Number.NaN,
			min: times[0] ?? Number.NaN,
			max: times[times.length - 1] ?? Number.NaN,
		},
	};
}

async function main(): Promise<void> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-bundle-"));
	const files = (await readdir(path.join(ROOT, "src", "functions"))).filter((f) =>
		f.endsWith(".ts"),
	);
	const entries = Object.fromEntries(
		files.sort().map((f) => [path.basename(f, ".ts"), path.join(ROOT, "src", "functions", f)]),
	);
	// A function that splits is built alone, as SST builds it (infra/config.ts › FUNCTIONS).
	const { api, ...rest } = entries;
	const builds = [
		await bundleLikeSst(rest, dir, LAMBDA_RUNTIME),
		...(api ? [await bundleLikeSst({ api }, dir, LAMBDA_RUNTIME, FUNCTIONS.api.splitting)] : []),
	];
	const rows: Row[] = [];
	for (const { outfiles, metafile } of builds)
		for (const [fn, outfile] of Object.entries(outfiles))
			rows.push(await measure(fn, outfile, metafile));
	rows.sort((a, b) => a.fn.localeCompare(b.fn));
	// The reference, in the same run: the packages the API is built on, without Lisa.
	const kept = await bundleLikeSst(
		{ [KEPT]: path.join(ROOT, "bench", "kept-packages.ts") },
		dir,
		LAMBDA_RUNTIME,
	);
	const reference = await measure(KEPT, kept.outfiles[KEPT] ?? "", kept.metafile);
	rows.push(reference);
	console.log(
		`\nLambda bundles (esbuild as SST bundles for ${LAMBDA_RUNTIME}: ESM, minified), cold import over ${RUNS} fresh processes, Node ${process.version}, ${os.cpus().length} cores\n`,
	);
	console.log(
		"| function | loaded at import | gzip | lazy chunks | modules | import ms (median, min–max) | largest parts |",
	);
	console.log("|---|---:|---:|---:|---:|---:|---|");
	for (const r of rows)
		console.log(
			`| ${r.fn} | ${kb(r.bytes)} | ${kb(r.gzipBytes)} | ${r.lazyBytes ? kb(r.lazyBytes) : "–"} | ${r.modules} | ${r.importMs.median.toFixed(0)} (${r.importMs.min.toFixed(0)}–${r.importMs.max.toFixed(0)}) | ${r.largest.map((l) => `${l.pkg} ${kb(l.bytes)}`).join(", ")} |`,
		);
	const apiRow = rows.find((r) => r.fn === "api");
	const sizeOk = apiRow ? apiRow.bytes <= API_BUDGET_BYTES : false;
	const importOk = apiRow ? apiRow.importMs.median <= API_IMPORT_BUDGET_MS : false;
	const verdict = (ok: boolean) => (ok ? "within" : "OVER");
	console.log(
		`\nAPI bundle ${apiRow ? kb(apiRow.bytes) : "missing"}: ${verdict(sizeOk)} the ${kb(API_BUDGET_BYTES)} budget.` +
			`\nAPI cold import ${apiRow ? `${apiRow.importMs.median.toFixed(0)} ms` : "missing"} (median): ${verdict(importOk)} the ${API_IMPORT_BUDGET_MS} ms budget.` +
			`\nThe packages it is built on take ${reference.importMs.median.toFixed(0)} ms alone (the reference, this run): Lisa's own code adds ${apiRow ? (apiRow.importMs.median - reference.importMs.median).toFixed(0) : "?"} ms.\n`,
	);

	await writeResult("bundle", {
		runtime: LAMBDA_RUNTIME,
		importRuns: RUNS,
		apiBudgetBytes: API_BUDGET_BYTES,
		apiImportBudgetMs: API_IMPORT_BUDGET_MS,
		referenceImportMs: reference.importMs.median,
		rows,
	});
	await rm(dir, { recursive: true, force: true });
	if (!sizeOk || !importOk) process.exitCode = 1;
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
