import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../support/cli";
import { createStackWorld, type StackWorld } from "../support/stack";

// `npm start` as a user or a process manager runs it, and stops it: the real npm, the real signals.
// However npm is stopped, the node server it started must stop too, not serve on as an orphan.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ startStack: false });
});
afterAll(() => w.stop());

interface NpmStart {
	npm: ChildProcess;
	url: string;
	/** Everything npm and the server printed, once both have exited (their stdout is closed). */
	closed: Promise<string>;
}

/** `npm start` in its own process group; resolves once the banner says where Lisa is. */
async function npmStart(env: NodeJS.ProcessEnv = w.env): Promise<NpmStart> {
	const npm = spawn("npm", ["start"], {
		cwd: ROOT,
		env,
		detached: true,
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	npm.stderr?.on("data", (b: Buffer) => {
		out += b.toString();
	});
	// stdout is shared by npm and the server it started: it closes when both are gone.
	const closed = new Promise<string>((resolve) => npm.stdout?.on("close", () => resolve(out)));
	const url = await new Promise<string>((resolve, reject) => {
		npm.stdout?.on("data", (b: Buffer) => {
			out += b.toString();
			const up = out.match(/Lisa is up at (http:\/\/\S+)/)?.[1];
			if (up && out.includes("stop it:")) resolve(up);
		});
		npm.once("exit", () => reject(new Error(`npm start exited early:\n${out}`)));
	});
	return { npm, url, closed };
}

const answers = (url: string) =>
	fetch(`${url}/healthz`).then(
		(r) => r.status,
		() => "refused",
	);

describe("npm start", () => {
	it("lists what needs attention first: a broken config before anything else", async () => {
		const file = path.join(path.dirname(w.configFile), "typo.yaml");
		await writeFile(file, `${await readFile(w.configFile, "utf8")}valdiate: [npm test]\n`);
		const start = await npmStart({ ...w.env, LISA_CONFIG: file });
		process.kill(-(start.npm.pid as number), "SIGTERM");
		const lines = (await start.closed).split("\n");
		const up = lines.findIndex((l) => l.startsWith("Lisa is up at"));
		expect(lines.slice(up + 1, up + 4)).toEqual([
			"  needs attention:",
			`  ✗ invalid config ${file}:`,
			"  - valdiate: unknown key — fix: did you mean `repos[].validate`? (it belongs there, not here)",
		]);
		expect(lines.findIndex((l) => l.startsWith("  health:"))).toBeGreaterThan(up + 3);
		expect(lines).toContain(
			"  command line:  npx lisa status | runs | logs | cancel | retry | doctor (docs/cli.md › Command line)",
		);
	});

	it("checks the agent CLIs the config needs", async () => {
		const start = await npmStart();
		process.kill(-(start.npm.pid as number), "SIGTERM");
		const out = await start.closed;
		// Run as the agents run: as root, as a uid of the pool.
		expect(out).toMatch(
			process.getuid?.() === 0
				? /\n {2}✓ claude agent CLI: \S+\/claude \(claude 0\.0\.0-fake, as uid \d+\)\n/
				: /\n {2}✓ claude agent CLI: \S+\/claude \(claude 0\.0\.0-fake\)\n/,
		);
		expect(out).toContain("\n  ✓ claude credentials: ANTHROPIC_API_KEY\n");
	});

	it("says in one line when Lisa already runs: on the same data dir, or on the port", async () => {
		const first = await npmStart();
		try {
			const port = new URL(first.url).port;
			const server = readFileSync(
				`/proc/${first.npm.pid}/task/${first.npm.pid}/children`,
				"utf8",
			).trim();
			const again = await run("npm", ["start"], w.env);
			expect(again.code).toBe(1);
			const lines = again.stderr.trim().split("\n");
			expect(lines).toEqual([
				`lisa start: Lisa already runs at ${first.url} (pid ${server}) on the data dir ${w.env.LISA_DATA_DIR}: stop it first, or give this one another LISA_DATA_DIR (and PORT)`,
			]);
			const other = await run("npm", ["start"], {
				...w.env,
				LISA_DATA_DIR: path.join(w.dir, "other-data"),
				PORT: port,
			});
			expect(other.code).toBe(1);
			expect(other.stderr.trim()).toBe(
				`lisa start: Lisa already runs at http://127.0.0.1:${port} (pid ${server}): stop it first, or set PORT (and LISA_DATA_DIR) to start another`,
			);
			// The first one is untouched by both.
			expect(await answers(first.url)).toBe(200);
		} finally {
			process.kill(-(first.npm.pid as number), "SIGTERM");
			await first.closed;
		}
	});

	it("says in one line which program holds the port", async () => {
		const holder = createServer();
		await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
		const port = (holder.address() as AddressInfo).port;
		try {
			const r = await run("npm", ["start"], { ...w.env, PORT: String(port) });
			expect(r.code).toBe(1);
			expect(r.stderr.trim()).toMatch(
				new RegExp(
					`^lisa start: port ${port} is in use by pid ${process.pid} \\(.+\\): set PORT to a free port, or stop that program$`,
				),
			);
		} finally {
			holder.close();
		}
	});

	it.each([
		["SIGTERM to npm", "SIGTERM", false],
		["SIGINT to npm", "SIGINT", false],
		["SIGHUP to npm", "SIGHUP", false],
		["SIGKILL to npm", "SIGKILL", false],
		["SIGTERM to its process group", "SIGTERM", true],
		["SIGHUP to its process group", "SIGHUP", true],
	] as const)("%s stops the server too", async (_, signal, group) => {
		const start = await npmStart();
		expect(await answers(start.url)).toBe(200);
		const pid = start.npm.pid as number;
		process.kill(group ? -pid : pid, signal);
		const out = await start.closed;
		expect(await answers(start.url)).toBe("refused");
		// It stopped as it should: its tasks stopped, not dropped by a forced exit.
		expect(out).toMatch(/: stopping \(running tasks are stopped/);
	});
});
