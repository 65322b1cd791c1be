import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARED_DIR } from "../../src/local/agent-reach";
import { type AnthropicDouble, startAnthropicDouble } from "../doubles/models/anthropic";
import { modelEnv } from "../support/agent-cli";
import { copyCheckout } from "../support/cli";
import { git } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";

// The first hour as root: `git clone … /root/lisa` (mode 700, as root's home is), `npm install`,
// `npm start`. The agents' uids cannot enter that folder: the stack places their workspaces and the
// pinned CLIs where they can, says so in one line, and a run's agent (the real claude) works.

const ROOT = process.getuid?.() === 0;

let w: StackWorld;
let model: AnthropicDouble;
let home: string;
let checkout: string;
let npm: ChildProcess | undefined;

beforeAll(async () => {
	if (!ROOT) return;
	model = await startAnthropicDouble();
	w = await createStackWorld({
		startStack: false,
		configExtra: "models: [claude]\nlimits: {max_attempts: 1}",
		// The real claude: the pinned one in agents/, which nothing but the stack's own PATH names.
		env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, ...modelEnv("claude", model) },
	});
	// A home folder closed to others, with a checkout in it (hard links: no 1.2 GB copy).
	home = await mkdtemp(path.join(os.tmpdir(), "lisa-home-"));
	checkout = path.join(home, "lisa");
	await copyCheckout(checkout, { agents: true });
});
afterAll(async () => {
	if (npm?.pid && npm.exitCode === null) process.kill(-npm.pid, "SIGKILL");
	await w?.stop();
	await model?.stop();
	if (home) await rm(home, { recursive: true, force: true });
});

describe.skipIf(!ROOT)("npm start from a checkout closed to other users (root in /root)", () => {
	it("starts, says where the agents' files went and why, and a run's agent works", async () => {
		const { LISA_DATA_DIR: _, ...env } = w.env;
		npm = spawn("npm", ["start"], {
			cwd: checkout,
			env: { ...env, npm_config_update_notifier: "false" },
			detached: true,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let out = "";
		npm.stdout?.on("data", (b: Buffer) => {
			out += b.toString();
		});
		npm.stderr?.on("data", (b: Buffer) => {
			out += b.toString();
		});
		const closed = new Promise<void>((resolve) => npm?.stdout?.on("close", resolve));
		const deadline = Date.now() + 60_000;
		while (!out.includes("stop it:") && npm.exitCode === null && Date.now() < deadline)
			await new Promise((r) => setTimeout(r, 100));
		expect(out).toContain("stop it:");
		expect(out).not.toMatch(/\n\s+at /); // no stack trace

		const dataDir = path.join(checkout, ".lisa", "local");
		expect(out).toContain(`  data dir:      ${dataDir}\n`);
		const workspaces = out.match(/ {2}workspaces: {4}(\S+)\n/)?.[1] as string;
		expect(workspaces).toMatch(new RegExp(`^${SHARED_DIR}/workspaces/[0-9a-f]{12}$`));
		expect(out).toContain(
			`  agent files:   under ${SHARED_DIR}: the workspaces and the pinned agent CLIs, as ${home} is closed to other users\n`,
		);
		const cli = out.match(
			/ {2}✓ claude agent CLI: (\S+)\/claude \(2\.1\.330 \(Claude Code\), as uid (\d+)\)\n/,
		);
		expect(cli?.[1]).toMatch(new RegExp(`^${SHARED_DIR}/agents/[0-9a-f-]+/node_modules/\\.bin$`));
		expect(out).toContain("  ✓ claude credentials: ANTHROPIC_API_KEY\n");

		// A run: the agent uid runs the mirrored CLI in a workspace it can reach.
		const url = out.match(/Lisa is up at (http:\/\/\S+)/)?.[1] as string;
		w.attach(url, (await readFile(path.join(dataDir, "api-token"), "utf8")).trim());
		model.script(
			{
				tools: [
					{
						name: "Bash",
						input: {
							command: [
								"printf 'Hello\\n' > GREETING.md",
								"git add GREETING.md",
								"git commit -q -m 'feat: add a greeting'",
								`printf '{"prTitle":"feat: add a greeting","prBody":"- a greeting"}' > .lisa-manifest.json`,
							].join(" && "),
						},
					},
				],
			},
			{ text: "Added GREETING.md." },
		);
		const run = await w.waitForRun(
			await w.startRun("Add a greeting", "Add GREETING.md saying hello."),
			undefined,
			120_000,
		);
		expect(run.status, run.error).toBe("succeeded");
		const branch = run.steps[0]?.branch as string;
		expect(await git(w.repo.path, "show", `${branch}:GREETING.md`)).toBe("Hello");

		process.kill(-(npm.pid as number), "SIGTERM");
		await closed;
		// The run's workspace went with its task.
		expect(readdirSync(workspaces)).toEqual([]);
		// This test's mirror and workspaces go with its checkout (a real checkout keeps its own).
		await rm(path.dirname(path.dirname(cli?.[1] as string)), { recursive: true, force: true });
		await rm(workspaces, { recursive: true, force: true });
	});
});
