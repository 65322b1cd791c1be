import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentUidPool } from "../../src/local/agent-users";

// The local pool of agent uids (docs/security.md › Security) under stacks that race for it: a uid
// lent to two running steps would let one step's agent read and rewrite the other's. Each "stack"
// here is a process of its own taking every uid it can at the same moment as the others.

const POOL_MODULE = pathToFileURL(
	fileURLToPath(new URL("../../src/local/agent-users.ts", import.meta.url)),
).href;
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const RANGE = { first: 64000, last: 64007 };

let dir: string;
let script: string;
const stacks: ChildProcess[] = [];
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-agent-uids-"));
	// Searchable by every user, as /var/lib/lisa is: what keeps an agent out is the pool's own doing.
	await chmod(dir, 0o755);
	script = path.join(dir, "take.mts");
	// Takes every uid it can once the clock reaches `startAt`, prints them, and holds them.
	await writeFile(
		script,
		`import { AgentUidPool } from ${JSON.stringify(POOL_MODULE)};
const [namespace, startAt] = process.argv.slice(2);
const pool = new AgentUidPool(${JSON.stringify(RANGE)}, namespace);
await new Promise((r) => setTimeout(r, Number(startAt) - Date.now()));
const uids = [];
for (;;) {
	try { uids.push(await pool.take()); } catch { break; }
}
console.log(JSON.stringify(uids));
setInterval(() => {}, 60_000);
`,
	);
});
afterEach(() => {
	for (const s of stacks.splice(0)) s.kill("SIGKILL");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let pools = 0;
/** A folder of locks of its own: the pools given the same one share its uids. */
const namespace = () => path.join(dir, `locks-${++pools}`);

/** Starts `n` stacks that take at once; each resolves with the uids it holds. */
function race(n: number, ns: string): { stack: ChildProcess; uids: Promise<number[]> }[] {
	const startAt = Date.now() + 1500;
	return Array.from({ length: n }, () => {
		const stack = spawn(process.execPath, ["--import", TSX, script, ns, String(startAt)], {
			stdio: ["ignore", "pipe", "inherit"],
		});
		stacks.push(stack);
		const lines = createInterface({ input: stack.stdout as NodeJS.ReadableStream });
		const uids = new Promise<number[]>((resolve, reject) => {
			lines.once("line", (l) => resolve(JSON.parse(l) as number[]));
			stack.once("exit", (code) => reject(new Error(`a stack exited with ${code}`)));
		});
		return { stack, uids };
	});
}

const all = (held: number[][]) => held.flat().sort((a, b) => a - b);
const everyUid = Array.from({ length: RANGE.last - RANGE.first + 1 }, (_, i) => RANGE.first + i);

describe("the agent uid pool under racing stacks", () => {
	it("lends each uid to one step at a time, across pools, never an account's", async () => {
		const ns = namespace();
		// 65534 is nobody's account on this machine: never lent.
		const a = new AgentUidPool({ first: 65533, last: 65535 }, ns);
		const b = new AgentUidPool({ first: 65533, last: 65535 }, ns);
		const first = await a.take();
		const second = await b.take();
		expect([first, second].sort()).toEqual([65533, 65535]);
		await expect(a.take()).rejects.toThrow(/every agent uid of 65533-65535 .* is in use/);
		await b.give(second);
		expect(await a.take()).toBe(second);
		await a.giveAll();
		await b.giveAll();
	});

	it("frees none of a pool's uids for another process when a second pool of its process asks for them", async () => {
		// fcntl locks are the process's: a second open and close of a held LOCK file dropped the lock,
		// and another stack then stopped every process of a uid this one had lent to a running step.
		const ns = namespace();
		const holder = new AgentUidPool(RANGE, ns);
		for (const _ of everyUid) await holder.take();
		await expect(new AgentUidPool(RANGE, ns).take()).rejects.toThrow(/is in use/);
		const [other] = race(1, ns);
		expect(await other?.uids).toEqual([]);
		await holder.giveAll();
	});

	it("never lends a uid to two stacks taking at the same moment", async () => {
		const held = await Promise.all(race(4, namespace()).map((s) => s.uids));
		expect(all(held)).toEqual(everyUid);
	});

	it("frees the uids of a stack that died holding them, to exactly one of the stacks racing for them", async () => {
		const ns = namespace();
		const [holder] = race(1, ns);
		const dead = await (holder as { uids: Promise<number[]> }).uids;
		expect(dead).toEqual(everyUid);
		const died = new Promise((r) => holder?.stack.once("exit", r));
		holder?.stack.kill("SIGKILL");
		await died;
		const held = await Promise.all(race(4, ns).map((s) => s.uids));
		expect(all(held)).toEqual(everyUid);
	});
});

// An agent: a process of another uid that tries every way it has to hold the uids' locks — the
// abstract socket names the pool once bound (`\0<locks>-<uid>`), and the locks' folder itself —
// prints what it managed, and holds on.
const SQUATTER = `
const net = require("node:net"), fs = require("node:fs"), path = require("node:path");
const [locks, first, last] = process.argv.slice(1);
const held = [];
const tries = [];
for (let uid = Number(first); uid <= Number(last); uid++) {
	tries.push(new Promise((ok) => {
		const s = net.createServer().once("error", () => ok()).listen({ path: "\\0" + locks + "-" + uid }, () => { held.push("name " + uid); ok(); });
	}));
	try { fs.mkdirSync(path.join(locks, String(uid)), { recursive: true }); fs.writeFileSync(path.join(locks, String(uid), "LOCK"), ""); held.push("file " + uid); } catch {}
}
Promise.all(tries).then(() => console.log(JSON.stringify(held)));
setInterval(() => {}, 60000);
`;

describe("the agent uid pool against an agent", () => {
	it.skipIf(process.getuid?.() !== 0)(
		"no agent can take a uid out of the pool: not by binding lock names, not through the locks' folder",
		async () => {
			const locks = namespace();
			const first = new AgentUidPool(RANGE, locks);
			await first.give(await first.take());
			const squatter = spawn(
				process.execPath,
				["-e", SQUATTER, locks, String(RANGE.first), String(RANGE.last)],
				{ uid: 64100, gid: 64100, cwd: "/", stdio: ["ignore", "pipe", "inherit"] },
			);
			stacks.push(squatter);
			const lines = createInterface({ input: squatter.stdout as NodeJS.ReadableStream });
			const held = await new Promise<string[]>((resolve) =>
				lines.once("line", (l) => resolve(JSON.parse(l) as string[])),
			);
			const pool = new AgentUidPool(RANGE, locks);
			const taken: number[] = [];
			for (const _ of everyUid) taken.push(await pool.take());
			expect(taken.sort((a, b) => a - b)).toEqual(everyUid);
			await pool.giveAll();
			// It bound the names (nothing stops that), which hold nothing now, and got no file of the
			// folder, which only root can open.
			expect(held.filter((h) => h.startsWith("name"))).toHaveLength(everyUid.length);
			expect(held.filter((h) => h.startsWith("file"))).toEqual([]);
			expect((await stat(locks)).mode & 0o777).toBe(0o700);
		},
	);
});
