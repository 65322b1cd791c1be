import type { KnipConfig } from "knip";

// Dead code, kept gone (docs/development.md › Commands). `npm run knip` runs knip twice:
// - `knip`: every file, dependency and export is used outside its own file (tests count);
// - `knip --production --exclude types`: only the `!` entries and the code they reach (no tests,
//   bench or demo), and every exported value is used by that code, in its own file or another: a
//   function only tests call is dead. An export a test imports that its own file uses stays (the
//   test's way in); a type only tests name is no code, and the first run holds it to a user.
// The bin (bin/lisa.mjs) and the package scripts' files (src/cli/main.ts, test/screenshots.ts, …)
// are entries by knip's reading of package.json; the tests by its reading of vitest.config.ts.
const config = ({ production }: { production?: boolean }): KnipConfig => ({
	entry: [
		// The Lambda handlers, named by path in infra/*.ts (handler: "src/functions/….handler").
		"src/functions/*.ts!",
		// The agent task: bundled by src/task/build.mjs (run as a file), or spawned through tsx.
		"src/task/main.ts!",
		"src/task/build.mjs!",
		// Spawned as a file by src/task/egress/namespace.ts.
		"src/task/egress/holder.mjs!",
		// SST deploys it, with the infra/ files it imports.
		"sst.config.ts!",
		// Run as files: the benchmarks and bench/ingest.ts's worker; the fake agent CLI tests install.
		"bench/*.{ts,mjs}",
		"test/doubles/agents/fake-agent.mjs",
		// `npm run demo` is `exec node --import tsx test/demo.ts`: knip does not read through `exec`.
		"test/demo.ts",
		// The dashboard's entry, which the browser loads from the API (src/api/assets.ts).
		"src/dashboard/main.js!",
	],
	// Not agents/: a package of its own, the pinned agent CLIs (its select.mjs is run as a file).
	project: ["src/**/*.{ts,mjs,js}!", "infra/*.ts!", "bench/**/*.{ts,mjs}", "test/**/*.{ts,mjs}"],
	// The browser loads these from the API's /assets, as files of the packages (src/api/assets.ts).
	ignoreDependencies: ["preact", "htm"],
	ignoreUnresolved: [/^\/assets\//],
	// System tools (iproute2, util-linux, coreutils, mmdebstrap), not npm packages.
	ignoreBinaries: ["ip", "unshare", "setsid", "mkfifo", "mmdebstrap"],
	// Its plugin reads sst.config.ts as a config file, which production mode skips: an entry instead.
	sst: false,
	ignoreExportsUsedInFile: production === true,
});

export default config;
