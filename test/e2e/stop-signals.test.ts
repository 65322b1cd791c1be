import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// How `lisa start` and the demo stop (src/cli/signals.ts), as real processes under a parent that
// plays npm: a signal starts one stop, and neither a second copy of it nor npm dying of it cuts
// that stop short.

const SIGNALS = fileURLToPath(new URL("../../src/cli/signals.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

let dir: string;
let script: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-signals-"));
	script = path.join(dir, "slow-stop.ts");
	// A stop that takes 3 s, as a stack with running tasks does.
	await writeFile(
		script,
		`import { onStop } from ${JSON.stringify(SIGNALS)};
onStop((why) => {
	console.log(\`stopping: \${why}\`);
	setTimeout(() => { console.log("stopped"); process.exit(0); }, 3000);
});
setInterval(() => {}, 1000);
console.log("ready");
`,
	);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The script under a shell that stays its parent (as npm does), leading their process group. */
function underNpm() {
	const parent = spawn("sh", ["-c", `"${process.execPath}" --import ${TSX} "${script}"; true`], {
		env: { ...process.env, npm_lifecycle_event: "start" },
		detached: true,
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	parent.stdout?.on("data", (b: Buffer) => {
		out += b.toString();
	});
	const closed = new Promise<void>((resolve) => parent.stdout?.on("close", resolve));
	return { parent, output: () => out, closed };
}

async function until(check: () => boolean) {
	const deadline = Date.now() + 20_000;
	while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe("a stop under way", () => {
	it("finishes when npm dies of the same SIGHUP (a closed terminal): npm gone is no second signal", async () => {
		const p = underNpm();
		await until(() => p.output().includes("ready"));
		process.kill(-(p.parent.pid as number), "SIGHUP");
		await p.closed;
		expect(p.output()).toBe("ready\nstopping: SIGHUP\nstopped\n");
	});

	it("stops when npm is killed without passing a signal on", async () => {
		const p = underNpm();
		await until(() => p.output().includes("ready"));
		process.kill(p.parent.pid as number, "SIGKILL");
		await p.closed;
		expect(p.output()).toMatch(/^ready\nstopping: npm \(process \d+\) is gone\nstopped\n$/);
	});
});
