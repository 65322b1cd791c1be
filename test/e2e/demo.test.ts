import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runAnswer, runsAnswer } from "../../src/api/answers";
import { isRunning } from "../support/task";

// `npm run demo -- --keep` as a newcomer runs it (README › Quick start): a real process that files
// its issues, stays up with its runs readable at the URL it printed, and stops everything it started
// on Ctrl-C (SIGINT) or SIGTERM.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

interface Demo {
	child: ChildProcess;
	output(): string;
	exited: Promise<number | null>;
	/** Every process seen descending from it while it ran (looked for every 100 ms). */
	tree: Map<string, { pid: number; start: string }>;
}

const started: Demo[] = [];
afterAll(() => {
	for (const d of started) if (d.child.exitCode === null) d.child.kill("SIGKILL");
});

function demo(args: string[]): Demo {
	return track(
		spawn(process.execPath, ["--import", TSX, path.join(ROOT, "test/demo.ts"), ...args], {
			cwd: ROOT,
			env: process.env,
			stdio: ["ignore", "pipe", "pipe"],
		}),
	);
}

/** `npm run demo`, as a newcomer runs it, leading its own process group (as a terminal's job does). */
const npmRunDemo = () =>
	track(
		spawn("npm", ["run", "demo"], {
			cwd: ROOT,
			env: process.env,
			detached: true,
			stdio: ["ignore", "pipe", "pipe"],
		}),
	);

/** Its output, its end once its stdout closed (npm and the demo share it), and its process tree. */
function track(child: ChildProcess): Demo {
	let out = "";
	child.stdout?.on("data", (b: Buffer) => {
		out += b.toString();
	});
	child.stderr?.on("data", (b: Buffer) => {
		out += b.toString();
	});
	const tree = new Map<string, { pid: number; start: string }>();
	const look = setInterval(() => {
		for (const p of descendants(child.pid as number)) tree.set(`${p.pid}:${p.start}`, p);
	}, 100);
	const exited = new Promise<number | null>((resolve) =>
		child.stdout?.once("close", () => {
			clearInterval(look);
			if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
			else child.once("exit", (code) => resolve(code));
		}),
	);
	const d = { child, output: () => out, exited, tree };
	started.push(d);
	return d;
}

async function waitFor(d: Demo, re: RegExp, ms: number): Promise<RegExpMatchArray> {
	const deadline = Date.now() + ms;
	for (;;) {
		const m = d.output().match(re);
		if (m) return m;
		if (d.child.exitCode !== null || Date.now() > deadline)
			throw new Error(`the demo did not print ${re}:\n${d.output()}`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

/** Every process descended from `pid`, with its start time (so a reused pid is not mistaken for it). */
function descendants(pid: number): { pid: number; start: string }[] {
	const stats = readdirSync("/proc")
		.filter((n) => /^\d+$/.test(n))
		.flatMap((n) => {
			try {
				const stat = readFileSync(`/proc/${n}/stat`, "utf8");
				const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
				return [{ pid: Number(n), ppid: Number(f[1]), pgid: Number(f[2]), start: f[19] ?? "" }];
			} catch {
				return [];
			}
		});
	const found: { pid: number; start: string }[] = [];
	const queue = [pid];
	while (queue.length) {
		const parent = queue.shift();
		for (const s of stats.filter((p) => p.ppid === parent)) {
			found.push({ pid: s.pid, start: s.start });
			queue.push(s.pid);
		}
	}
	return found;
}

const alive = ({ pid, start }: { pid: number; start: string }) => {
	if (!isRunning(pid)) return false;
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] === start;
	} catch {
		return false;
	}
};

/** What it started that still runs, given a few seconds to go (a process waits for its stdin to close). */
async function survivors(d: Demo): Promise<{ pid: number; start: string }[]> {
	const seen = [...d.tree.values()];
	const deadline = Date.now() + 10_000;
	while (seen.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
	return seen.filter(alive);
}

const portOpen = (url: string) =>
	new Promise<boolean>((resolve) => {
		const { hostname, port } = new URL(url);
		const socket = connect(Number(port), hostname);
		socket.once("connect", () => {
			socket.destroy();
			resolve(true);
		});
		socket.once("error", () => resolve(false));
	});

describe("npm run demo -- --keep", () => {
	it("stays up with its runs in the API it printed, and SIGINT stops everything it started", async () => {
		const d = demo(["--keep"]);
		const [, url] = await waitFor(d, /The demo is ready: Lisa at (http:\/\/\S+)/, 240_000);
		const out = d.output();
		const readToken = out.match(/read token: +(\S+)/)?.[1];
		const dir = out.match(/Ctrl-C stops it: the stack, the doubles, and (\S+) are gone/)?.[1];
		expect(readToken).toBeDefined();
		expect(dir && existsSync(dir)).toBe(true);
		expect(out).toContain(`LISA_URL=${url} LISA_READ_TOKEN=${readToken} npx lisa runs`);
		// The dashboard link signs in with a one-time code, never the token
		// (docs/dashboard.md › Signing in from a link).
		const link = out.match(/ {2}dashboard: {3}(\S+) {2}\(signs in once, within 10 min\)\n/)?.[1];
		expect(link?.startsWith(`${url}/#code=`)).toBe(true);
		expect(link).not.toContain(readToken);
		const signIn = () =>
			fetch(`${url}/dashboard/sign-in`, {
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify({ code: link?.split("#code=")[1] }),
			});
		expect(await (await signIn()).json()).toEqual({ token: readToken });
		expect((await signIn()).status).toBe(401);

		// The runs, read with the token it printed: two succeeded (one with two PRs), one failed.
		const get = async (p: string) => {
			const res = await fetch(`${url}${p}`, { headers: { authorization: `Bearer ${readToken}` } });
			expect(res.status).toBe(200);
			return res.json();
		};
		const { runs } = runsAnswer.parse(await get("/api/runs"));
		const byTitle = Object.fromEntries(runs.map((r) => [r.title, r]));
		expect(runs.map((r) => r.status).sort()).toEqual(["failed", "succeeded", "succeeded"]);
		expect(byTitle["Add a health check endpoint"]?.prUrls).toHaveLength(1);
		const multi = runAnswer.parse(await get(`/api/runs/${byTitle["Export reports as CSV"]?.id}`));
		expect(multi).toMatchObject({ status: "succeeded", repos: ["api", "web"] });
		expect(multi.prUrls).toHaveLength(2);
		expect(multi.steps.slice(1).map((s) => [s.repo, s.changes?.list[0]?.path])).toEqual([
			["api", "src/routes/reports-export.ts"],
			["web", "src/components/ExportButton.tsx"],
		]);
		expect(out).toContain(`npx lisa status ${multi.id}`);
		// Each pull request as it printed it: its repo, its title and what it changed.
		for (const step of multi.steps.slice(1))
			expect(out).toContain(`  ${step.repo}: ${step.prUrl}  "${step.prTitle}"  1 file +3 −0\n`);
		expect(multi.steps[1]?.prTitle).toMatch(/^feat: /);
		const failed = byTitle["Migrate the billing tables"];
		expect(failed?.status).toBe("failed");
		expect(failed?.error).toContain(
			"claude exited with code 3: error: the migration needs a database the sandbox does not have",
		);

		// The agent tasks it ran, tsx's esbuild service: seen while it ran.
		expect(d.tree.size).toBeGreaterThan(1);
		d.child.kill("SIGINT");
		expect(await d.exited).toBe(0);
		expect(d.output()).toMatch(/SIGINT: stopping the demo…\n[\s\S]*stopped\.\n$/);
		expect(await portOpen(url as string)).toBe(false);
		expect(existsSync(dir as string)).toBe(false);
		// Nothing it started outlives it (the esbuild service goes when its stdin closes).
		expect(await survivors(d)).toEqual([]);
		// As long as its wait for the demo to be ready, on a machine busy with the other tests.
	}, 300_000);

	it("SIGTERM while the runs are still going stops it too, leaving nothing behind", async () => {
		const d = demo([]);
		await waitFor(
			d,
			/ENG-\d+ "Migrate the billing tables": POST \/webhooks\/linear → 202/,
			120_000,
		);
		d.child.kill("SIGTERM");
		expect(await d.exited).toBe(0);
		expect(d.output()).toContain("SIGTERM: stopping the demo…");
		expect(d.output()).not.toContain("The demo is ready");
		expect(await survivors(d)).toEqual([]);
	});

	it.each([
		["SIGINT", "npm"],
		["SIGTERM", "npm"],
		["SIGHUP", "npm"],
		["SIGINT", "its process group"],
		["SIGTERM", "its process group"],
		["SIGHUP", "its process group"],
	] as const)(
		"%s to `npm run demo` (to %s) stops it and deletes its directory",
		async (signal, to) => {
			const group = to !== "npm";
			const d = npmRunDemo();
			const [, dir] = await waitFor(d, /the demo's files are in (\S+) until it stops/, 120_000);
			await waitFor(d, /POST \/webhooks\/linear → 202/, 120_000);
			expect(existsSync(dir as string)).toBe(true);
			const npm = d.child;
			process.kill(group ? -(npm.pid as number) : (npm.pid as number), signal);
			await d.exited;
			expect(d.output()).toMatch(/: stopping the demo…\n/);
			expect(existsSync(dir as string)).toBe(false);
			// The demo itself (npm's child) and its stack's tasks: nothing it started outlives it.
			expect(d.tree.size).toBeGreaterThan(1);
			expect(await survivors(d)).toEqual([]);
		},
	);

	it("refuses arguments it does not know, saying which and what it takes", async () => {
		for (const [args, said] of [
			[["--kep"], "Unknown option '--kep'"],
			[["--port", "http"], '--port must be a port number (1-65535), not "http"'],
			[["--keep", "--once"], "--keep and --once contradict each other"],
		] as const) {
			const d = demo([...args]);
			expect(await d.exited).toBe(2);
			expect(d.output()).toContain(said);
			expect(d.output()).toContain("usage: npm run demo [-- --keep | --once] [--port N]");
		}
	});
});
