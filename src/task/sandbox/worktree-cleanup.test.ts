// The worktree the real Claude Code makes with `--worktree`: it starts from the base Lisa checked
// out, without fetching; and though Claude Code leaves it locked after its run, Lisa's discard
// removes it, or the next model's run under the same name would reuse its leftovers.
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHttpServer, startGitHttp } from "../../../test/doubles/git-http/server";
import { type AnthropicDouble, startAnthropicDouble } from "../../../test/doubles/models/anthropic";
import { cliEnv, modelEnv } from "../../../test/support/agent-cli";
import { bareRepo, git } from "../../../test/support/git";
import { claude } from "../agents/providers/claude";
import { Git, gitEnv } from "./git";
import { Workspace } from "./workspace";

const TOKEN = "ghs_worktreecleanup0123456789abcdefgh";
const NAME = "lisa-feat-greeting";

let dir: string;
let server: GitHttpServer;
let api: AnthropicDouble;
let ws: Workspace;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-wt-"));
	const bare = (await bareRepo(dir, "api")).path;
	// The step's base is not the remote's default branch: the worktree must start from it all the same.
	const seed = path.join(dir, "api-seed");
	await git(seed, "checkout", "-b", "develop");
	await git(seed, "commit", "--allow-empty", "-m", "feat: develop work");
	await git(seed, "push", "origin", "develop");
	server = await startGitHttp({ root: dir, token: TOKEN });
	api = await startAnthropicDouble();
	const url = `${server.url}/${path.basename(bare)}`;
	ws = new Workspace(
		new Git(gitEnv({ ...process.env, HOME: dir }), { token: TOKEN, url }),
		path.join(dir, "ws"),
		url,
		"develop",
		"feat/greeting",
	);
	await ws.prepare();
});
afterAll(async () => {
	await api.stop();
	await server.stop();
	await rm(dir, { recursive: true, force: true });
});

/** One `claude … --worktree NAME` run in the clone's root, as Lisa runs it for a native worktree. */
async function runClaude(command: string) {
	const home = await mkdtemp(path.join(dir, "home-"));
	api.script(
		{ tools: [{ name: "Bash", input: { command, description: "Work" } }] },
		{ text: "Done." },
	);
	const cwd = await ws.nativeRoot();
	return claude.run("Add a greeting.", {
		cwd,
		env: cliEnv("claude", home, modelEnv("claude", api)),
		timeoutMs: 120_000,
		scratchDir: ws.scratch,
		nativeWorktree: NAME,
	});
}

/** The last tool result the model got. */
const lastToolResult = () =>
	JSON.stringify(
		api.turns
			.at(-1)
			?.messages.flatMap((m) => m.content)
			.findLast((b) => b.type === "tool_result")?.content,
	);

describe("Claude Code's own worktree", () => {
	it("starts from Lisa's base, and discard removes it although Claude Code leaves it locked", async () => {
		const remote = server.requests.length;
		const first = await runClaude(
			"git log --format=%s && echo leftover > leftover.txt && git add leftover.txt && git commit -q -m 'wip: leftover'",
		);
		expect(first.ok, first.output).toBe(true);
		expect(lastToolResult()).toContain("feat: develop work");
		const tree = await ws.findNativeTree(`worktree-${NAME}`);
		expect(tree).toBe(path.join(await ws.nativeRoot(), ".claude", "worktrees", NAME));
		const list = await git(ws.clone, "worktree", "list", "--porcelain");
		expect(list).toMatch(new RegExp(`worktree ${tree}\\n[^]*?\\nlocked `));

		await ws.discard();
		expect(await ws.findNativeTree()).toBeUndefined();
		expect(existsSync(tree as string)).toBe(false);

		// The same name again: the model sees the base, not the last run's commit or file.
		const second = await runClaude("git log --format=%s; ls");
		expect(second.ok, second.output).toBe(true);
		expect(lastToolResult()).toContain("feat: develop work");
		expect(lastToolResult()).not.toContain("leftover");
		// Making its worktree, Claude Code never reached for the remote (the agent has no token).
		expect(server.requests.slice(remote)).toEqual([]);
	});
});
