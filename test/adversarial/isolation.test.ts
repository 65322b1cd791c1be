import { spawn } from "node:child_process";
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedFolder } from "../../src/local/agent-reach";
import { copyCheckout } from "../support/cli";
import { createStackWorld, type StackWorld } from "../support/stack";
import { isRunning } from "../support/task";
import { WEBHOOK_SECRET } from "../support/world";

// `npm start` as root (as CI runs it): every running step's agent is a uid of its own, so a hostile
// agent reads none of Lisa's secrets, and stopping one step's leftovers never touches another's.

const ROOT = process.getuid?.() === 0;
/**
 * This stack's agent uids: a range of its own, so that the other suites' stacks, sharing the default
 * pool beside it, never make its four steps wait for a uid.
 */
const UIDS = "62040-62047";
const [FIRST, LAST] = UIDS.split("-").map(Number) as [number, number];

let w: StackWorld;
beforeAll(async () => {
	if (!ROOT) return;
	w = await createStackWorld({
		configExtra: "limits: {max_concurrent_runs: 4}",
		env: { LISA_AGENT_UIDS: UIDS },
	});
});
afterAll(() => w?.stop());

describe.skipIf(!ROOT)("npm start as root: agents run as uids of their own", () => {
	it("an agent reads none of Lisa's secrets: not the stack's or the task's environment, the token files or the store", async () => {
		const stack = w.stack;
		if (!stack) throw new Error("no stack");
		const probe = path.join(w.dir, "probe.log");
		await writeFile(probe, "");
		await chmod(probe, 0o666); // past the umask: the agent must be able to report
		const dataDir = stack.settings.dataDir;
		const script = path.join(w.dir, "probe.sh");
		await writeFile(
			script,
			`for f in ${dataDir}/api-token ${dataDir}/read-token /proc/1/environ; do
	cat "$f" > /dev/null 2>&1 && echo "read $f" >> ${probe}
done
for d in ${dataDir}/dynamodb ${dataDir}/workspaces; do
	ls "$d" > /dev/null 2>&1 && echo "listed $d" >> ${probe}
done
echo "probed" >> ${probe}
`,
			{ mode: 0o644 },
		);
		const runId = await w.startRun(
			"Isolated by default",
			`lisa-fake: scan-secrets\nlisa-fake: run=${script}`,
		);
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		const [call] = await w.agents.callsOf(runId);
		expect(call?.uid).toBeGreaterThanOrEqual(FIRST);
		expect(call?.uid).toBeLessThanOrEqual(LAST);
		expect(call?.gid).toBe(call?.uid);
		const scan = (await w.agents.scans()).find((s) => s.uid === call?.uid);
		const secrets = [
			stack.apiToken,
			stack.readToken,
			stack.settings.localAccessKey,
			w.github.token,
			w.linear.apiKey,
			WEBHOOK_SECRET,
			w.trello.token,
		];
		for (const s of secrets) expect(JSON.stringify(scan)).not.toContain(s);
		expect(scan?.ancestors.every((a) => !a.readable)).toBe(true);
		expect(await readFile(probe, "utf8")).toBe("probed\n");
	});

	it("four steps at once, each leaving a watcher behind: each agent its own uid, each attempt stops only its own", async () => {
		const ids = await Promise.all(
			[1, 2, 3, 4].map((i) =>
				w.startRun(`Concurrent ${i}`, "lisa-fake: leave-running\nlisa-fake: sleep=3"),
			),
		);
		const runs = await Promise.all(ids.map((id) => w.waitForRun(id)));
		const why = await Promise.all(
			runs.map(async (r) => {
				const { body } = await w.api<{ events: { type: string; message: string }[] }>(
					`/api/runs/${r.id}/events?limit=500`,
				);
				return `${r.id} ${r.status}: ${body.events.map((e) => `${e.type}: ${e.message}`).join("\n")}`;
			}),
		);
		expect(
			runs.map((r) => r.status),
			why.join("\n\n"),
		).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
		const left = (await readFile(w.agents.log, "utf8"))
			.split("\n")
			.filter((l) => l.includes('"left"'))
			.map((l) => JSON.parse(l) as { cli: string; left: { pid: number } });
		const watchers = await w.agents.watchers();
		// A uid names an agent only while its step runs (a step retried under load may take a uid an
		// ended step gave back): a step's watchers are found by the directory they were left in, and
		// only agents that ran at once must hold different uids.
		const agents: { runId: string; uid: number; from: number; to: number }[] = [];
		for (const id of ids) {
			const calls = await w.agents.callsOf(id);
			const { body } = await w.api<{
				events: { type: string; at: string; data?: { pids?: number[] } }[];
			}>(`/api/runs/${id}/events?limit=500`);
			const context = body.events.map((e) => e.type).join(" ");
			const stops = body.events.filter((e) => e.type === "agent.processes_stopped");
			expect(calls.length, context).toBeGreaterThanOrEqual(1);
			expect(stops.length, context).toBe(calls.length);
			for (const [i, c] of calls.entries()) {
				const to = Date.parse(stops[i]?.at ?? "");
				agents.push({ runId: id, uid: c.uid, from: Date.parse(c.at), to });
			}
			// Every watcher was stopped, each by its own step (pids of its own uid only).
			const own = watchers.filter((x) => x.cwd.includes(id)).map((x) => x.pid);
			expect(own.length, context).toBe(calls.length);
			const stopped = stops.flatMap((e) => e.data?.pids ?? []);
			expect(stopped).toEqual(expect.arrayContaining(own));
			for (const x of watchers.filter((x) => !x.cwd.includes(id)))
				expect(stopped).not.toContain(x.pid);
		}
		for (const a of agents) {
			expect(a.uid >= FIRST && a.uid <= LAST).toBe(true);
			const together = agents.filter((b) => b !== a && b.from < a.to && a.from < b.to);
			for (const b of together)
				expect(b.uid, `${a.runId} and ${b.runId} ran at once`).not.toBe(a.uid);
		}
		for (const { left: l } of left) expect(isRunning(l.pid)).toBe(false);
	});
});

describe("npm start as another user", () => {
	it.skipIf(!ROOT)(
		"says plainly that agents can read Lisa's secrets, and how to isolate them",
		async () => {
			const NOBODY = 65534;
			const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-nobody-"));
			await chown(dir, NOBODY, NOBODY);
			let root = fileURLToPath(new URL("../..", import.meta.url));
			// A checkout closed to other users (root's home, mktemp -d): nobody runs a copy of it.
			if (closedFolder(root)) {
				root = path.join(dir, "checkout");
				await copyCheckout(root);
			}
			const tsx = pathToFileURL(createRequire(path.join(root, "package.json")).resolve("tsx")).href;
			const child = spawn(
				process.execPath,
				["--import", tsx, path.join(root, "src/cli/main.ts"), "start"],
				{
					cwd: dir,
					uid: NOBODY,
					gid: NOBODY,
					env: {
						PATH: process.env.PATH,
						HOME: dir,
						PORT: "0",
						LISA_DATA_DIR: path.join(dir, "data"),
						AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
					},
				},
			);
			let out = "";
			child.stdout.on("data", (b: Buffer) => {
				out += b.toString();
			});
			child.stderr.on("data", (b: Buffer) => {
				out += b.toString();
			});
			try {
				const deadline = Date.now() + 30_000;
				while (!out.includes("agents:") && child.exitCode === null && Date.now() < deadline)
					await new Promise((r) => setTimeout(r, 100));
				expect(out).toContain(
					`! agents:      run as your own user (uid ${NOBODY}): an agent can read Lisa's secrets`,
				);
				expect(out).toContain("use its local services and reach any host");
				expect(out).toContain(
					"start Lisa as root (each step's agent then gets a uid of its own and a network of its own)",
				);
			} finally {
				child.kill("SIGKILL");
				await rm(dir, { recursive: true, force: true });
			}
		},
	);
});
