// Keeps only the named agent CLIs (package.json › clis) in package.json's dependencies, so an image
// built with `--build-arg AGENT_CLIS=claude` installs Claude Code alone. The lockfile still pins
// the versions. Used by Dockerfile.agent: `node select.mjs claude codex`.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("./package.json", import.meta.url);
const pkg = JSON.parse(readFileSync(file, "utf8"));
const wanted = process.argv.slice(2);
const unknown = wanted.filter((cli) => !Object.hasOwn(pkg.clis, cli));
if (wanted.length === 0 || unknown.length) {
	console.error(
		`AGENT_CLIS must name one or more of ${Object.keys(pkg.clis).join(", ")}${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`,
	);
	process.exit(1);
}
const keep = new Set(wanted.map((cli) => pkg.clis[cli]));
pkg.dependencies = Object.fromEntries(
	Object.entries(pkg.dependencies).filter(([name]) => keep.has(name)),
);
writeFileSync(file, `${JSON.stringify(pkg, null, "\t")}\n`);
