import { mkdir, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseNumstat, type StepChanges } from "../../domain/changes";
import { PLAN_FILE } from "../../domain/plan";
import { MANIFEST_FILE } from "../prompts/prompt";
import type { Git } from "./git";
import { handOver } from "./identity";
import { PublishRepo } from "./publication";

/** Where the agent's work is: Lisa's worktree, or the one Claude Code created itself. */
export interface Work {
	dir: string;
	/** Where the manifest is written: the worktree, or the clone's root for a native worktree. */
	manifestDir: string;
	native: boolean;
}

/** What an attempt makes in its workspace, and removes when it ends. */
const WORKSPACE_ENTRIES = ["repo", "tree", "scratch", "publish.git", "home", "plan"];

/** Removes what an attempt made in its workspace (not the directory, which its launcher made). */
export async function clearWorkspace(dir: string, entries = WORKSPACE_ENTRIES): Promise<void> {
	for (const entry of entries) await rm(path.join(dir, entry), { recursive: true, force: true });
}

/**
 * A step's git workspace: a fresh partial clone, Lisa's worktree on the step's branch from
 * `origin/<base>` (or the clone's root checked out at the base for Claude Code's own
 * `--worktree`), and Lisa's publish repository (see publication.ts).
 */
export class Workspace {
	readonly clone: string;
	readonly tree: string;
	/** Files for the agent that must not be committed (a long prompt), outside every worktree. */
	readonly scratch: string;
	baseSha = "";
	private publishRepo?: PublishRepo;
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

	get publish(): PublishRepo {
		if (!this.publishRepo) throw new Error("the workspace is not prepared");
		return this.publishRepo;
	}

	/**
	 * Clones afresh (a clone an earlier agent had is never trusted again) and checks the base out
	 * at the clone's root, which also fetches the base's blobs: nothing the agent's user runs later
	 * needs the token. Then makes the publish repository from the clone, still the task's alone,
	 * and hands the clone, the scratch directory and an empty directory for Lisa's worktree to the
	 * agent's user, when there is one.
	 */
	async prepare(): Promise<void> {
		await clearWorkspace(this.dir, ["repo", "tree", "publish.git"]);
		await mkdir(this.scratch, { recursive: true });
		const dir = await realpath(this.dir);
		this.real = { clone: path.join(dir, "repo"), tree: path.join(dir, "tree") };
		await this.git.run(
			this.dir,
			["clone", "--filter=blob:none", "--no-checkout", "--quiet", "--", this.url, this.clone],
			{ remote: true },
		);
		// Lisa's files are never part of the change.
		await mkdir(path.join(this.clone, ".git", "info"), { recursive: true });
		await writeFile(
			path.join(this.clone, ".git", "info", "exclude"),
			`${MANIFEST_FILE}\n${PLAN_FILE}\n.claude/worktrees/\n`,
		);
		this.baseSha = await this.git.run(
			this.clone,
			["rev-parse", "--verify", "--end-of-options", `refs/remotes/origin/${this.base}^{commit}`],
			{ task: true },
		);
		await this.git.run(this.clone, ["checkout", "--force", "--quiet", "--detach", this.baseSha], {
			remote: true,
		});
		this.publishRepo = new PublishRepo(
			this.git,
			path.join(this.dir, "publish.git"),
			this.url,
			this.baseSha,
		);
		await this.publishRepo.create(this.clone);
		if (this.git.user) {
			await mkdir(this.tree);
			await handOver([this.clone, this.tree, this.scratch], this.git.user);
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
	 * The worktree Claude Code created: the one on the manifest's branch, else the only one besides
	 * the clone's root and Lisa's.
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
		// Twice: once for changes, once for the lock Claude Code leaves on its own worktree (git
		// refuses a locked worktree otherwise, and the next `--worktree` run would reuse it).
		for (const w of await this.otherTrees(true))
			await this.git
				.run(this.clone, ["worktree", "remove", "--force", "--force", w.path])
				.catch(() => {});
		await this.git.run(this.clone, ["worktree", "prune"]);
		await rm(path.join(this.clone, MANIFEST_FILE), { force: true });
	}

	/**
	 * The commit to judge and publish: the work's HEAD as it is now, copied into the publish
	 * repository; from here on only this SHA counts.
	 */
	async pin(work: Work): Promise<string> {
		const sha = await this.head(work);
		await this.publish.import(work.dir, sha);
		return sha;
	}

	/** The commit the work's HEAD is at now. */
	async head(work: Work): Promise<string> {
		const sha = await this.git.run(work.dir, ["rev-parse", "--verify", "HEAD^{commit}"]);
		if (!/^[0-9a-f]{40,64}$/.test(sha)) throw new Error(`HEAD is not a commit id: ${sha}`);
		return sha;
	}

	/**
	 * What `sha` changed since the base (docs/http-api.md › What a step changed), in the agent's
	 * repository, which holds both sides' blobs; no external diff or textconv it may have configured.
	 */
	async changes(work: Work, sha: string): Promise<StepChanges> {
		const out = await this.git.run(
			work.dir,
			[
				"diff",
				"--numstat",
				"-z",
				"--no-renames",
				"--no-ext-diff",
				"--no-textconv",
				`${this.baseSha}...${sha}`,
				"--",
			],
			{ timeoutMs: 60_000 },
		);
		return parseNumstat(out);
	}

	/** Whether tracked files of the work have changes not committed (untracked ones may be setup's). */
	async edited(work: Work): Promise<boolean> {
		const status = await this.git.run(work.dir, ["status", "--porcelain", "--untracked-files=no"]);
		return status !== "";
	}

	/**
	 * Changes of the worktree (status and every worktree's HEAD): the supervisor's activity signal,
	 * read while the agent works. Without optional locks: a `git status` refreshing the index would
	 * hold `index.lock`, and the agent's own `git add` or `commit` at that moment would fail.
	 */
	async fingerprint(dir: string): Promise<string> {
		const [status, heads] = await Promise.all([
			this.git.run(dir, ["--no-optional-locks", "status", "--porcelain"], { timeoutMs: 10_000 }),
			this.git.run(dir, ["worktree", "list", "--porcelain"], { timeoutMs: 10_000 }),
		]);
		return `${status}\n${heads}`;
	}

	/** Every worktree but the clone's root and, with `keepTree`, Lisa's. */
	private async otherTrees(keepTree: boolean): Promise<{ path: string; branch?: string }[]> {
		return (await this.worktrees()).filter(
			(w) => w.path !== this.real.clone && !(keepTree && w.path === this.real.tree),
		);
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
