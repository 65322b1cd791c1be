import { mkdir, realpath, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { MANIFEST_FILE } from "../../shared/domain/prompt";
import type { Git } from "./git";
import { handOver } from "./identity";

/** Where the agent's work is: Lisa's worktree, or the one Claude Code created itself. */
export interface Work {
	dir: string;
	/** Where the manifest is written: the worktree, or the clone's root for a native worktree. */
	manifestDir: string;
	native: boolean;
}

// The only settings a clone Lisa made has. Anything else in a cached clone was written by
// someone else (an agent of an earlier attempt) and the clone is not trusted with the token again.
const CLONE_CONFIG =
	/^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode)|remote\.origin\.(url|fetch|promisor|partialclonefilter)|extensions\.partialclone)=/;

/**
 * A step's git workspace: a partial clone (cached across attempts when it is still clean), Lisa's
 * worktree on the step's branch from `origin/<base>`, or the clone's root checked out at the base
 * for Claude Code's own `--worktree`.
 */
export class Workspace {
	readonly clone: string;
	readonly tree: string;
	/** Files for the agent that must not be committed (a long prompt), outside every worktree. */
	readonly scratch: string;
	baseSha = "";
	private treeReady = false;
	/** The clone's and the tree's paths as git lists them (symlinks resolved). */
	private real = { clone: "", tree: "" };

	constructor(
		private readonly git: Git,
		readonly dir: string,
		private readonly url: string,
		private readonly base: string,
		readonly branch: string,
	) {
		this.clone = path.join(dir, "repo");
		this.tree = path.join(dir, "tree");
		this.scratch = path.join(dir, "scratch");
	}

	/**
	 * Clones (or, without an agent user, reuses a clean cached clone) and checks the base out at the
	 * clone's root, which also fetches the base's blobs: nothing the agent's user runs later needs
	 * the token. With an agent user the clone is always fresh — the task never runs git or writes in
	 * a repository an agent has had — and is then handed to that user with the scratch directory and
	 * an empty directory for Lisa's worktree.
	 */
	async prepare(): Promise<void> {
		await mkdir(this.scratch, { recursive: true });
		const dir = await realpath(this.dir);
		this.real = { clone: path.join(dir, "repo"), tree: path.join(dir, "tree") };
		if (!this.git.user && (await this.reusable())) {
			await this.git.run(this.clone, ["fetch", "--prune", "origin"], { remote: true });
			// Every attempt starts from the base branch: earlier attempts' worktrees go.
			for (const w of await this.otherTrees(false)) await this.removeTree(w.path);
		} else {
			await rm(this.clone, { recursive: true, force: true });
			await this.git.run(
				this.dir,
				["clone", "--filter=blob:none", "--no-checkout", "--", this.url, this.clone],
				{ remote: true },
			);
		}
		await rm(this.tree, { recursive: true, force: true });
		await this.git.run(this.clone, ["worktree", "prune"], { task: true });
		// Lisa's files are never part of the change.
		await mkdir(path.join(this.clone, ".git", "info"), { recursive: true });
		await writeFile(
			path.join(this.clone, ".git", "info", "exclude"),
			`${MANIFEST_FILE}\n.lisa-plan.json\n.claude/worktrees/\n`,
		);
		this.baseSha = await this.git.run(
			this.clone,
			["rev-parse", "--verify", "--end-of-options", `refs/remotes/origin/${this.base}^{commit}`],
			{ task: true },
		);
		await this.git.run(this.clone, ["checkout", "--force", "--quiet", "--detach", this.baseSha], {
			remote: true,
		});
		if (this.git.user) {
			await mkdir(this.tree);
			await handOver([this.clone, this.tree, this.scratch], this.git.user);
		}
	}

	private async reusable(): Promise<boolean> {
		try {
			// Another user's clone (an agent user's, from an earlier attempt) is not the task's to use.
			if ((await stat(this.clone)).uid !== process.getuid?.()) return false;
			const config = await this.git.run(
				this.dir,
				["config", "--file", path.join(this.clone, ".git", "config"), "--list"],
				{ task: true },
			);
			const lines = config.split("\n").filter(Boolean);
			return (
				lines.every((l) => CLONE_CONFIG.test(l)) && lines.includes(`remote.origin.url=${this.url}`)
			);
		} catch {
			return false;
		}
	}

	/** Lisa's worktree on the step's branch, created on first use (the base's blobs are local). */
	async lisaTree(): Promise<string> {
		if (!this.treeReady) {
			await this.git.run(this.clone, [
				"worktree",
				"add",
				"--force",
				"-B",
				this.branch,
				this.tree,
				this.baseSha,
			]);
			this.treeReady = true;
		}
		return this.tree;
	}

	/** The clone's root at the base, where Claude Code creates its own worktree. */
	async nativeRoot(): Promise<string> {
		await this.git.run(this.clone, ["checkout", "--force", "--detach", this.baseSha]);
		return this.clone;
	}

	/**
	 * The worktree Claude Code created (seed 004 §1): the one on the manifest's branch, else the only
	 * one besides the clone's root and Lisa's.
	 */
	async findNativeTree(branch?: string): Promise<string | undefined> {
		const others = await this.otherTrees(true);
		if (branch) {
			const named = others.find((w) => w.branch === `refs/heads/${branch}`);
			if (named) return named.path;
		}
		return others.length === 1 ? others[0]?.path : undefined;
	}

	/** Throws away what a failed agent left, so the next model starts from the base again. */
	async discard(): Promise<void> {
		if (this.treeReady) {
			await this.git.run(this.tree, ["reset", "--hard", this.baseSha]);
			await this.git.run(this.tree, ["clean", "-fd"]);
			await rm(path.join(this.tree, MANIFEST_FILE), { force: true });
		}
		for (const w of await this.otherTrees(true)) await this.removeTree(w.path);
		await this.git.run(this.clone, ["worktree", "prune"]);
		await rm(path.join(this.clone, MANIFEST_FILE), { force: true });
	}

	async commitsAhead(work: Work): Promise<number> {
		return Number(await this.git.run(work.dir, ["rev-list", "--count", `${this.baseSha}..HEAD`]));
	}

	/** Paths the work changes compared with the base (a rename lists both names). */
	async changedFiles(work: Work): Promise<string[]> {
		const out = await this.git.run(work.dir, [
			"diff",
			"--name-only",
			"--no-renames",
			this.baseSha,
			"HEAD",
		]);
		return out.split("\n").filter(Boolean);
	}

	/** Changes of the worktree (status and every worktree's HEAD): the supervisor's activity signal. */
	async fingerprint(dir: string): Promise<string> {
		const [status, heads] = await Promise.all([
			this.git.run(dir, ["status", "--porcelain"], { timeoutMs: 10_000 }),
			this.git.run(dir, ["worktree", "list", "--porcelain"], { timeoutMs: 10_000 }),
		]);
		return `${status}\n${heads}`;
	}

	/**
	 * Pushes the work's HEAD to the step's branch (Lisa owns it: a retried attempt replaces what an
	 * earlier one pushed). The push runs from a bare repository Lisa creates now, borrowing the
	 * clone's objects, so no config or hook the agent could have planted in the clone runs with
	 * the token; the URL is the configured one, never the clone's `origin`.
	 */
	async push(work: Work): Promise<string> {
		const sha = await this.git.run(work.dir, ["rev-parse", "--verify", "HEAD^{commit}"]);
		const pub = path.join(this.dir, "publish.git");
		await rm(pub, { recursive: true, force: true });
		await this.git.run(this.dir, ["init", "--bare", "--quiet", pub], { remote: true });
		await writeFile(
			path.join(pub, "objects", "info", "alternates"),
			`${path.join(this.clone, ".git", "objects")}\n`,
		);
		const ref = `refs/heads/${this.branch}`;
		await this.git.run(pub, ["update-ref", ref, sha], { task: true });
		await this.git.run(pub, ["push", "--force", "--quiet", "--", this.url, `${ref}:${ref}`], {
			remote: true,
		});
		return sha;
	}

	/**
	 * Removes Lisa's worktree; Claude Code's own is left to it (seed 004 §1). The workspace's own
	 * directory is the task's, so its entry goes by the task's hand (the agent's processes are gone).
	 */
	async cleanup(): Promise<void> {
		if (!this.treeReady) return;
		await this.removeTree(this.tree);
		await rm(this.tree, { recursive: true, force: true });
		await this.git.run(this.clone, ["worktree", "prune"]).catch(() => {});
		this.treeReady = false;
	}

	/** Every worktree but the clone's root and, with `keepTree`, Lisa's. */
	private async otherTrees(keepTree: boolean): Promise<{ path: string; branch?: string }[]> {
		return (await this.worktrees()).filter(
			(w) => w.path !== this.real.clone && !(keepTree && w.path === this.real.tree),
		);
	}

	/** Removes a worktree, leaving it when git cannot. */
	private async removeTree(dir: string): Promise<void> {
		await this.git.run(this.clone, ["worktree", "remove", "--force", dir]).catch(() => {});
	}

	private async worktrees(): Promise<{ path: string; branch?: string }[]> {
		const out = await this.git.run(this.clone, ["worktree", "list", "--porcelain"]);
		return out
			.split("\n\n")
			.map((block) => {
				const lines = block.split("\n");
				const wt = lines.find((l) => l.startsWith("worktree "))?.slice(9);
				const branch = lines.find((l) => l.startsWith("branch "))?.slice(7);
				return { path: wt ?? "", branch };
			})
			.filter((w) => w.path);
	}
}
