import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentChecks } from "../../src/cli/agent-checks";
import { parseConfig } from "../../src/config/schema";
import { agentReach, closedFolder, reachableClis, SHARED_DIR } from "../../src/local/agent-reach";
import { claude } from "../../src/task/agents/providers/claude";
import { CliProvider } from "../../src/task/agents/providers/cli-provider";

// As root, agents run as other uids: what they run must be where they can reach it. A checkout in
// root's home or a `mktemp -d` folder is closed to them (mode 700): the start mirrors the pinned CLIs
// and Node.js under SHARED_DIR, makes the workspaces there, and a CLI no agent can run says so.

const ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const run = promisify(execFile);
/** Pinned CLIs that are not there: what a test of the other parts passes (the checkout may be closed). */
const NO_CLIS = () => path.join(dir, "no-clis", "node_modules", ".bin");
const asNobody = (file: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
	run(file, args, { uid: NOBODY, gid: NOBODY, cwd: "/", env: { PATH: "/usr/bin:/bin", ...env } });

let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-reach-"));
	// Open, so that what each test closes is what closes a path.
	await chmod(dir, 0o711);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A fake install of one CLI (`<root>/node_modules/.bin/<name>`), in a folder closed to others. */
async function closedInstall(name: string, script: string): Promise<{ root: string; bin: string }> {
	const root = await mkdtemp(path.join(dir, "closed-"));
	const bin = path.join(root, "node_modules", ".bin");
	await mkdir(bin, { recursive: true });
	await writeFile(path.join(root, "node_modules", ".package-lock.json"), `{"name":"${root}"}`);
	await writeFile(path.join(bin, name), script, { mode: 0o755 });
	await chmod(root, 0o700);
	return { root, bin };
}

describe.skipIf(!ROOT)("what agents of other uids run", () => {
	it("finds the folder that closes a path to other users", async () => {
		const { root, bin } = await closedInstall("claude", "#!/bin/sh\n");
		expect(closedFolder(path.join(bin, "claude"))).toBe(root);
		expect(closedFolder("/usr/bin/env")).toBeUndefined();
	});

	it("mirrors closed CLIs once, as hard links an agent uid runs, and never changes the originals", async () => {
		const { root, bin } = await closedInstall("claude", "#!/bin/sh\necho fake-claude $(id -u)\n");
		// Closed to others by its own mode too: the mirror gets a readable copy, the original stays.
		const secretish = path.join(root, "node_modules", "private.txt");
		await writeFile(secretish, "npm installed this 0600\n", { mode: 0o600 });
		await expect(asNobody(path.join(bin, "claude"), [])).rejects.toMatchObject({ code: "EACCES" });

		const [a, b] = await Promise.all([reachableClis(bin), reachableClis(bin)]);
		expect(a).toEqual(b);
		expect(a.closed).toBe(root);
		expect(a.dir.startsWith(`${SHARED_DIR}/agents/`)).toBe(true);
		expect(a.dir.endsWith("/node_modules/.bin")).toBe(true);
		const { stdout } = await asNobody(path.join(a.dir, "claude"), []);
		expect(stdout.trim()).toBe(`fake-claude ${NOBODY}`);
		// A hard link: the same file, no copy of the CLIs at each start.
		expect((await stat(path.join(a.dir, "claude"))).ino).toBe(
			(await stat(path.join(bin, "claude"))).ino,
		);
		expect((await stat(secretish)).mode & 0o777).toBe(0o600);
		expect((await stat(path.join(a.dir, "..", "private.txt"))).mode & 0o044).toBe(0o044);

		// The same install again: the same mirror. A new install: a new one, and the old one gone.
		expect(await reachableClis(bin)).toEqual(a);
		await writeFile(path.join(root, "node_modules", ".package-lock.json"), '{"v":2}');
		const next = await reachableClis(bin);
		expect(next.dir).not.toBe(a.dir);
		expect(closedFolder(path.join(next.dir, "claude"))).toBeUndefined();
		await expect(stat(a.dir)).rejects.toMatchObject({ code: "ENOENT" });
		await rm(path.dirname(path.dirname(next.dir)), { recursive: true, force: true });
	});

	it("mirrors a Node.js installed in a closed folder (nvm in root's home), npm with it", async () => {
		const prefix = path.join(await mkdtemp(path.join(dir, "nvm-")), "v20");
		await mkdir(path.join(prefix, "bin"), { recursive: true });
		const node = path.join(prefix, "bin", "node");
		await copyFile(process.execPath, node);
		await chmod(node, 0o755);
		// A global npmrc with a registry token: never where agents can read it.
		await mkdir(path.join(prefix, "etc"));
		await writeFile(
			path.join(prefix, "etc", "npmrc"),
			"//registry.example/:_authToken=npm_secret\n",
		);
		await chmod(path.dirname(prefix), 0o700);
		const data = await mkdtemp(path.join(dir, "data-"));
		await chmod(data, 0o711);
		const reach = await agentReach({
			dataDir: data,
			otherUids: true,
			pathVar: `${path.join(prefix, "bin")}:/usr/bin:/bin`,
			node,
			pinned: NO_CLIS(),
		});
		const [first] = reach.path.split(":");
		expect(first?.startsWith(`${SHARED_DIR}/node/`)).toBe(true);
		expect(reach.moved).toBe(
			`under ${SHARED_DIR}: Node.js, as ${path.dirname(prefix)} is closed to other users`,
		);
		// The workspaces stay in the data dir: agents reach it.
		expect(reach.workspaces).toBe(path.join(data, "workspaces"));
		const { stdout } = await asNobody("node", ["--version"], { PATH: reach.path });
		expect(stdout.trim()).toBe(process.version);
		expect(existsSync(path.join(first as string, "..", "etc"))).toBe(false);
		await rm(path.dirname(path.dirname(path.dirname(first as string))), {
			recursive: true,
			force: true,
		});
	});

	it("makes the workspaces under SHARED_DIR when the data dir is closed, saying why in one line", async () => {
		const data = await mkdtemp(path.join(dir, "data-"));
		const reach = await agentReach({
			dataDir: data,
			otherUids: true,
			pathVar: "/usr/bin",
			pinned: NO_CLIS(),
		});
		expect(reach.workspaces.startsWith(`${SHARED_DIR}/workspaces/`)).toBe(true);
		expect(closedFolder(path.dirname(reach.workspaces))).toBeUndefined();
		expect(reach.moved).toBe(
			`under ${SHARED_DIR}: the workspaces, as ${data} is closed to other users`,
		);
		// Without other uids nothing moves.
		const own = await agentReach({ dataDir: data, otherUids: false, pathVar: "/usr/bin" });
		expect(own.workspaces).toBe(path.join(data, "workspaces"));
		expect(own.moved).toBeUndefined();
	});

	it("a CLI no agent uid can run: the run says EACCES and the path, not 'not installed'", async () => {
		const { root, bin } = await closedInstall("claude", "#!/bin/sh\necho 2.1.330\n");
		const home = await mkdtemp(path.join(dir, "home-"));
		await chmod(home, 0o777);
		const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: home };
		const provider = claude as CliProvider;
		expect(provider).toBeInstanceOf(CliProvider);
		const why = await provider.unavailable(env, undefined, { uid: NOBODY, gid: NOBODY, home });
		expect(why).toBe(
			`claude cannot be run by the agent's uid ${NOBODY}: EACCES on ${bin}/claude (the file, or a folder above it, is closed to that user)`,
		);
		// As the task's own user it runs.
		expect(await provider.unavailable(env)).toBeUndefined();

		// `lisa doctor` and `npm start` say the same before any run, with the folder to blame.
		const config = parseConfig({
			source: "linear",
			models: ["claude"],
			repos: [{ name: "api", url: "https://github.com/acme/api.git" }],
		});
		const [check] = await agentChecks(
			config,
			{ ANTHROPIC_API_KEY: "k" },
			{
				path: env.PATH,
				uid: NOBODY,
			},
		);
		expect(check).toEqual({
			ok: false,
			label: `claude agent CLI: ${bin}/claude cannot be run as uid ${NOBODY} (EACCES: ${root} is closed to other users)`,
			hint: "install claude where any user can run it (npm i -g @anthropic-ai/claude-code), or take its folder off PATH so the one in agents/ is used",
		});
	});
});
