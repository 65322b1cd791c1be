import { lstat, mkdir, mkdtemp, readdir, rm, stat, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_SPECS } from ".";

// What a CLI's `prepare` writes as root for the agent's user must land in a directory of its own:
// an earlier model of the chain (the same user) may have left links in its home and the scratch
// directory, pointing wherever it wants root to write or hand over.

const AS_ROOT = process.getuid?.() === 0;
const AGENT = { uid: 61_990, gid: 61_990 };
let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-prepare-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const specs = CLI_SPECS.filter((s) => s.prepare);

describe.skipIf(!AS_ROOT)("each CLI's settings, written as root for the agent", () => {
	it.each(specs.map((s) => [s.name, s] as const))(
		"%s: never through a link the agent planted",
		async (name, spec) => {
			const root = path.join(dir, name);
			const victim = path.join(root, "victim");
			const home = path.join(root, "home");
			const scratch = path.join(root, "scratch");
			for (const d of [victim, home, scratch]) await mkdir(d, { recursive: true });
			// Every name a CLI's settings used or could use, pointing at the victim.
			for (const link of [
				path.join(home, ".config"),
				path.join(home, ".gemini"),
				path.join(home, ".codex"),
				path.join(scratch, "gemini-home"),
				path.join(scratch, "codex-home"),
				path.join(scratch, "opencode-config"),
			])
				await symlink(victim, link);
			const env = await spec.prepare?.({
				cwd: root,
				env: { HOME: home, PATH: process.env.PATH },
				timeoutMs: 1000,
				scratchDir: scratch,
				user: { ...AGENT, home },
			});
			expect(await readdir(victim)).toEqual([]);
			expect((await stat(victim)).uid).toBe(0);
			// What it made is new, inside the scratch directory, and the agent's.
			for (const v of Object.values(env ?? {})) {
				if (!v?.startsWith(scratch)) continue;
				const made = await lstat(v);
				expect(made.isSymbolicLink()).toBe(false);
				expect(made.uid).toBe(AGENT.uid);
			}
		},
	);
});
