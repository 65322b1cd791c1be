import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHttpServer, startGitHttp } from "../../../test/doubles/git-http/server";
import { bareRepo, git } from "../../../test/support/git";
import { authenticated, Git, gitEnv } from "./git";
import { Workspace } from "./workspace";

const exec = promisify(execFile);
const TOKEN = "ghs_workspacetest0123456789abcdefghij";

let dir: string;
let server: GitHttpServer;
let url: string;
let bare: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-ws-"));
	bare = (await bareRepo(dir, "api", "main", { "src/a.txt": "a\n" })).path;
	server = await startGitHttp({ root: dir, token: TOKEN });
	url = `${server.url}/api.git`;
});
afterAll(async () => {
	await server.stop();
	await rm(dir, { recursive: true, force: true });
});

const workspace = (name: string, branch = `feat/${name}`) =>
	new Workspace(
		new Git(gitEnv({ ...process.env, HOME: dir }), { token: TOKEN, url }),
		path.join(dir, name),
		url,
		"main",
		branch,
	);

/** What an agent does: edit and commit with its own, token-free environment. */
async function agentCommits(tree: string, file: string, text: string) {
	await writeFile(path.join(tree, file), text);
	await git(tree, "add", "-A");
	await git(tree, "commit", "-m", `feat: ${file}`);
}

describe("workspace and publishing over authenticated HTTP", () => {
	it("clones and pushes with the token only in the credential exchange", async () => {
		const ws = workspace("one");
		await ws.prepare();
		const tree = await ws.lisaTree();
		expect(await git(tree, "rev-parse", "--abbrev-ref", "HEAD")).toBe("feat/one");
		await agentCommits(tree, "b.txt", "b\n");
		const work = { dir: tree, manifestDir: tree, native: false };
		const sha = await ws.pin(work);
		const facts = await ws.publish.facts(sha);
		expect(facts).toMatchObject({ onBase: true, commitsAhead: 1, changesTree: true });
		expect(facts.touched).toEqual(["b.txt", "b.txt"]);
		await ws.publish.push(sha, ws.branch);

		expect(await git(bare, "log", "-1", "--format=%s", "feat/one")).toBe("feat: b.txt");
		const authed = server.requests.filter((r) => r.authorized);
		expect(authed.map((r) => r.method)).toEqual(expect.arrayContaining(["GET", "POST"]));
		expect(authed.every((r) => r.user === "x-access-token")).toBe(true);
		expect(server.requests.some((r) => r.url.includes(TOKEN))).toBe(false);
		// Nothing on disk remembers the token: not the clone's config, not the remote URL.
		expect(await readFile(path.join(ws.clone, ".git", "config"), "utf8")).not.toContain(TOKEN);
		expect(await git(ws.clone, "remote", "get-url", "origin")).toBe(url);
	});

	it("answers credential requests only for the configured host and protocol", async () => {
		const { args, env } = authenticated({ token: TOKEN, url });
		const host = new URL(url).host;
		const fill = async (input: string) =>
			(
				await new Promise<string>((resolve, reject) => {
					const child = execFile(
						"git",
						[...args, "credential", "fill"],
						{ env: { ...env, PATH: process.env.PATH, GIT_TERMINAL_PROMPT: "0" } },
						(err, stdout) => (err && !stdout ? reject(err) : resolve(stdout)),
					);
					child.stdin?.end(input);
				})
			).trim();
		expect(await fill(`protocol=http\nhost=${host}\n\n`)).toContain(`password=${TOKEN}`);
		await expect(fill("protocol=https\nhost=evil.example\n\n")).rejects.toThrow();
		await expect(fill(`protocol=https\nhost=${host}\n\n`)).rejects.toThrow();
	});

	it("does not trust a clone an agent reconfigured, nor its hooks or global config", async () => {
		const ws = workspace("two");
		await ws.prepare();
		const marker = path.join(dir, "pwned");
		const planted = `!f() { touch '${marker}'; }; f`;
		// An earlier attempt's agent rewired the clone: a credential helper, a hook, a URL rewrite.
		await git(ws.clone, "config", "credential.helper", planted);
		await git(ws.clone, "config", `url.https://evil.example/.insteadOf`, `${server.url}/`);
		const hooks = path.join(dir, "hooks");
		await exec("mkdir", ["-p", hooks]);
		for (const hook of ["pre-push", "reference-transaction", "post-checkout"])
			await writeFile(path.join(hooks, hook), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
		await git(ws.clone, "config", "core.hooksPath", hooks);
		await writeFile(
			path.join(dir, ".gitconfig"),
			`[credential]\n\thelper = ${planted}\n[core]\n\thooksPath = ${hooks}\n\tfsmonitor = ${path.join(hooks, "pre-push")}\n[url "https://evil.example/"]\n\tpushInsteadOf = ${server.url}/\n`,
		);

		await ws.prepare(); // a new attempt: the clone is made again
		const config = await readFile(path.join(ws.clone, ".git", "config"), "utf8");
		expect(config).not.toMatch(/helper|insteadOf|hooksPath/i);
		const tree = await ws.lisaTree();
		await agentCommits(tree, "c.txt", "c\n");
		// This attempt's agent does the same before Lisa pushes.
		await git(ws.clone, "config", "credential.helper", planted);
		await git(ws.clone, "config", "core.hooksPath", hooks);
		const sha = await ws.pin({ dir: tree, manifestDir: tree, native: false });
		await ws.publish.push(sha, ws.branch);
		expect(await git(bare, "log", "-1", "--format=%s", "feat/two")).toBe("feat: c.txt");
		expect(existsSync(marker)).toBe(false);
		await rm(path.join(dir, ".gitconfig"));
	});

	it("reads the agent's worktree for the supervisor without ever writing its index", async () => {
		const ws = workspace("four");
		await ws.prepare();
		const tree = await ws.lisaTree();
		const index = path.join(await git(tree, "rev-parse", "--absolute-git-dir"), "index");
		// A file touched but not changed: a plain `git status` refreshes the index and writes it,
		// holding index.lock meanwhile, where the agent's `git add` at that moment would fail.
		await utimes(path.join(tree, "src", "a.txt"), new Date(), new Date(Date.now() + 5_000));
		const before = await stat(index);
		const seen = await ws.fingerprint(tree);
		expect(seen).toContain(tree);
		expect((await stat(index)).mtimeMs).toBe(before.mtimeMs);
		// What it stands against: git writes the index on a status that may take its lock.
		await git(tree, "status", "--porcelain");
		expect((await stat(index)).mtimeMs).not.toBe(before.mtimeMs);
	});

	it("finds the worktree Claude Code created, and starts every attempt from the base", async () => {
		const ws = workspace("three");
		await ws.prepare();
		const root = await ws.nativeRoot();
		// What `claude --worktree lisa-x` does: a worktree of the root's HEAD on worktree-lisa-x.
		const native = path.join(root, ".claude", "worktrees", "lisa-x");
		await git(root, "worktree", "add", "-b", "worktree-lisa-x", native, "HEAD");
		await agentCommits(native, "d.txt", "d\n");
		const found = await ws.findNativeTree("worktree-lisa-x");
		expect(found && (await git(found, "rev-parse", "--show-toplevel"))).toBe(
			await git(native, "rev-parse", "--show-toplevel"),
		);
		expect(await ws.findNativeTree()).toBe(found);
		const sha = await ws.pin({ dir: native, manifestDir: root, native: true });
		expect((await ws.publish.facts(sha)).commitsAhead).toBe(1);

		await ws.discard();
		expect(await ws.findNativeTree()).toBeUndefined();
		await ws.prepare();
		const tree = await ws.lisaTree();
		const base = await ws.pin({ dir: tree, manifestDir: tree, native: false });
		expect(await ws.publish.facts(base)).toMatchObject({ commitsAhead: 0, changesTree: false });
	});
});
