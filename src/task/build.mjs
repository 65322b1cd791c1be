// Bundles the agent task into one ESM file for the container (Dockerfile.agent):
//   node src/task/build.mjs [outdir]   → <outdir>/agent.mjs (default dist/agent)
// esbuild comes with tsx; the bundle needs only Node 22 at run time.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("../..", import.meta.url));
const outdir = path.resolve(process.argv[2] ?? path.join(root, "dist", "agent"));

await build({
	entryPoints: [path.join(root, "src", "task", "main.ts")],
	outfile: path.join(outdir, "agent.mjs"),
	bundle: true,
	platform: "node",
	target: "node22",
	format: "esm",
	// Some dependencies still call require(); give the ESM bundle one.
	banner: {
		js: "import { createRequire as __lisaRequire } from 'node:module'; const require = __lisaRequire(import.meta.url);",
	},
	legalComments: "none",
	logLevel: "warning",
});
console.log(path.join(outdir, "agent.mjs"));
