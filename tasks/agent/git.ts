import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { MANIFEST_FILE } from "../../shared/domain/prompt";
import { type ProcessResult, runProcess } from "./process";

// Git through argv arrays. Credentials reach git only through a credential helper reading an
// environment variable of the git process itself: never the remote URL, the agent or the logs.

const CREDENTIAL_HELPER =
	'!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$LISA_GIT_TOKEN"; }; f';

export class GitError extends Error {
	constructor(
		readonly args: string[],
		readonly result: ProcessResult,
	) {
		super(
			`git ${args[0]} failed: ${result.error ?? result.output.trim().split("\n").slice(-3).join(" ")}`,
		);
		this.name = "GitError";
	}
}

export class Git {
	constructor(
		private readonly token: string | undefined,
		private readonly baseEnv: NodeJS.ProcessEnv,
	) {}

	async run(cwd: string, args: string[], opts: { timeoutMs?: number } = {}): Promise<string> {
		const env: NodeJS.ProcessEnv = {
			...this.baseEnv,
			GIT_TERMINAL_PROMPT: "0",
			GIT_AUTHOR_NAME: this.baseEnv.GIT_AUTHOR_NAME ?? "Lisa",
			GIT_AUTHOR_EMAIL: this.baseEnv.GIT_AUTHOR_EMAIL ?? "lisa@users.noreply.github.com",
			GIT_COMMITTER_NAME: this.baseEnv.GIT_COMMITTER_NAME ?? "Lisa",
			GIT_COMMITTER_EMAIL: this.baseEnv.GIT_COMMITTER_EMAIL ?? "lisa@users.noreply.github.com",
		};
		const auth = this.token ? ["-c", `credential.helper=${CREDENTIAL_HELPER}`] : [];
		if (this.token) env.LISA_GIT_TOKEN = this.token;
		const full = [...auth, ...args];
		const result = await runProcess("git", full, {
			cwd,
			env,
			timeoutMs: opts.timeoutMs ?? 10 * 60_000,
		});
		if (result.code !== 0) throw new GitError(args, result);
		return result.stdout.trim();
	}
}

export interface Checkout {
	/** The clone shared by a step's attempts. */
	clone: string;
	/** The worktree the agent works in, on the step's branch. */
	tree: string;
	baseSha: string;
}

/** Clone (partial, reusing a cache in the workspace) and a fresh worktree on `branch` from `origin/base`. */
export async function checkout(
	git: Git,
	url: string,
	workspace: string,
	base: string,
	branch: string,
): Promise<Checkout> {
	const clone = path.join(workspace, "repo");
	const tree = path.join(workspace, "tree");
	await mkdir(workspace, { recursive: true });
	try {
		await git.run(clone, ["rev-parse", "--git-dir"]);
		await git.run(clone, ["fetch", "--prune", "origin"]);
	} catch {
		await git.run(workspace, ["clone", "--filter=blob:none", "--no-checkout", url, clone]);
	}
	// A previous attempt's worktree is discarded: every attempt starts from the base branch.
	await rm(tree, { recursive: true, force: true });
	await git.run(clone, ["worktree", "prune"]);
	await git.run(clone, ["worktree", "add", "--force", "-B", branch, tree, `origin/${base}`]);
	// The manifest is for Lisa, never part of the change.
	const exclude = path.join(clone, ".git", "info", "exclude");
	await mkdir(path.dirname(exclude), { recursive: true });
	await writeFile(exclude, `${MANIFEST_FILE}\n.lisa-plan.json\n`, { flag: "a" });
	const baseSha = await git.run(tree, ["rev-parse", `origin/${base}`]);
	return { clone, tree, baseSha };
}

export async function commitsAhead(git: Git, tree: string, baseSha: string): Promise<number> {
	return Number(await git.run(tree, ["rev-list", "--count", `${baseSha}..HEAD`]));
}

export async function hasDiff(git: Git, tree: string, baseSha: string): Promise<boolean> {
	const stat = await git.run(tree, ["diff", "--name-only", baseSha, "HEAD"]);
	return stat.length > 0;
}

/** Lisa owns the branch: a retried attempt replaces what an earlier attempt pushed. */
export async function push(git: Git, tree: string, branch: string): Promise<void> {
	await git.run(tree, ["push", "--force", "origin", `HEAD:refs/heads/${branch}`]);
}
