import path from "node:path";
import { build, type Metafile } from "esbuild";

// esbuild as SST bundles a Node.js function for deploy (SST's pkg/runtime/node/build.go): one ESM
// file per function, minified, names kept, a linked source map, and a banner giving ESM back
// require/__dirname. Several functions build in one call (shared parsing); without code splitting
// each output is the same file SST would build for that function alone. A function that splits
// (`nodejs.splitting`) is built alone, its dynamic imports in chunks of their own beside it.

/** SST's esbuild target per Lambda runtime. */
const TARGETS: Record<string, string> = { "nodejs22.x": "es2023", "nodejs24.x": "es2024" };

const BANNER = [
	`import { createRequire as topLevelCreateRequire } from 'module';`,
	`const require = topLevelCreateRequire(import.meta.url);`,
	`import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
	`const __filename = topLevelFileUrlToPath(import.meta.url)`,
	`const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
].join("\n");

/**
 * Bundles each `name → entry` into `<outdir>/<name>/bundle.mjs` (the file Lambda runs); with
 * `splitting`, its dynamic imports go to chunks under `<outdir>/<name>/` (give one entry then).
 */
export async function bundleLikeSst(
	entries: Record<string, string>,
	outdir: string,
	runtime: string,
	splitting = false,
): Promise<{ outfiles: Record<string, string>; metafile: Metafile }> {
	const result = await build({
		entryPoints: Object.entries(entries).map(([name, entry]) => ({
			in: entry,
			out: `${name}/bundle`,
		})),
		outdir,
		outExtension: { ".js": ".mjs" },
		platform: "node",
		format: "esm",
		bundle: true,
		target: TARGETS[runtime] ?? "es2023",
		mainFields: ["module", "main"],
		keepNames: true,
		minify: true,
		sourcemap: "linked",
		external: ["sharp", "pg-native"],
		banner: { js: BANNER },
		metafile: true,
		logLevel: "warning",
		...(splitting ? { splitting, chunkNames: `${Object.keys(entries)[0]}/chunk-[hash]` } : {}),
	});
	const outfiles = Object.fromEntries(
		Object.keys(entries).map((name) => [name, path.join(outdir, name, "bundle.mjs")]),
	);
	return { outfiles, metafile: result.metafile };
}

/**
 * The outputs a fresh import of `outfile` loads: it and the chunks it imports statically, not those
 * it imports only when a code path asks (`import()`).
 */
export function loadedAtImport(metafile: Metafile, outfile: string): string[] {
	const key = (file: string) =>
		Object.keys(metafile.outputs).find((o) => path.resolve(o) === path.resolve(file));
	const seen = new Set<string>();
	const visit = (file: string | undefined) => {
		if (!file || seen.has(file)) return;
		seen.add(file);
		for (const i of metafile.outputs[file]?.imports ?? [])
			if (i.kind === "import-statement" && !i.external) visit(key(i.path));
	};
	visit(key(outfile));
	return [...seen];
}

/** The metafile's view of one output (its inputs and imports). */
export function outputOf(metafile: Metafile, outfile: string) {
	const entry = Object.entries(metafile.outputs).find(
		([file]) => path.resolve(file) === path.resolve(outfile),
	);
	if (!entry) throw new Error(`no output ${outfile} in the metafile`);
	return entry[1];
}
