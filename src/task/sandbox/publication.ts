import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { findSecrets } from "../../domain/redact";
import type { Git } from "./git";

// Lisa's own repository for publishing a step's work (docs/security.md › Security): a bare
// repository the task makes before any agent runs, never handed to the agent, holding the base
// commit and its trees (shallow at the base). The work's commits are copied in from the agent's
// repository — packed there as the agent, indexed here as the task, every object hashed as it
// arrives — so the gates read exactly the objects the push sends, and nothing the agent configured
// (replace refs, grafts, hooks, config) applies. The push sends a fixed SHA, never a ref the agent
// can move, and the remote branch is checked against it afterwards.

/** The facts the gates judge, about the commits between the base and the SHA to publish. */
export interface PublishFacts {
	/** Whether the SHA descends from the base. */
	onBase: boolean;
	commitsAhead: number;
	/**
	 * Paths the pushed history adds, deletes or changes (content, mode, link or submodule): every
	 * commit's own changes, merges against each parent.
	 */
	touched: string[];
	/** Whether the SHA's tree differs from the base's. */
	changesTree: boolean;
}

/**
 * The paths in `git … --raw -z` output: `:<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0`
 * (renames are never detected, so one path per entry). Paths come as they are: no quoting.
 */
function parseRaw(out: string): string[] {
	const tokens = out.split("\0");
	const paths: string[] = [];
	for (let i = 0; i < tokens.length; i++) {
		if (!tokens[i]?.replace(/^\n+/, "").startsWith(":")) continue;
		const p = tokens[++i];
		if (p !== undefined) paths.push(p);
	}
	return paths;
}

export class PublishRepo {
	constructor(
		private readonly git: Git,
		readonly dir: string,
		private readonly url: string,
		private readonly baseSha: string,
	) {}

	/** Made from the task's fresh clone, before the agent gets it: the base commit and its trees. */
	async create(clone: string): Promise<void> {
		await mkdir(this.dir, { recursive: true });
		await this.git.run(this.dir, ["init", "--bare", "--quiet"], { task: true });
		const objects = await this.git.run(
			clone,
			["rev-list", "--objects", "--no-walk", "--filter=blob:none", this.baseSha],
			{ task: true },
		);
		await this.git.pipe(
			{
				cwd: clone,
				args: ["pack-objects", "--stdout", "-q"],
				opts: { task: true, input: objects },
			},
			{ cwd: this.dir, args: ["index-pack", "--stdin"], opts: { task: true } },
		);
		// The base's history is not needed: the walk between the base and the work stops there.
		await writeFile(path.join(this.dir, "shallow"), `${this.baseSha}\n`);
	}

	/** Copies the commits from the base to `sha` out of the agent's repository (`workDir`). */
	async import(workDir: string, sha: string): Promise<void> {
		await this.git.pipe(
			{
				cwd: workDir,
				args: ["pack-objects", "--revs", "--stdout", "-q"],
				opts: { input: `${sha}\n^${this.baseSha}\n` },
			},
			{ cwd: this.dir, args: ["index-pack", "--stdin"], opts: { task: true } },
		);
		// Every object the push would send is here, or the work cannot be judged. A rewritten history
		// (an amended or rebased commit) leaves its parents out: that work is off the base, which
		// the gates refuse (facts), and nothing of it is ever pushed.
		await this.git
			.run(this.dir, ["rev-list", "--objects", "--quiet", sha, "--not", this.baseSha], {
				task: true,
			})
			.catch(async (err) => {
				if (await this.onBase(sha)) throw err;
			});
	}

	/** Whether `sha` descends from the base, as this repository's own objects show it. */
	private onBase(sha: string): Promise<boolean> {
		return this.git
			.run(this.dir, ["merge-base", "--is-ancestor", this.baseSha, sha], { task: true })
			.then(
				() => true,
				() => false,
			);
	}

	async facts(sha: string): Promise<PublishFacts> {
		const run = (args: string[]) => this.git.run(this.dir, args, { task: true });
		const onBase = await this.onBase(sha);
		if (!onBase) return { onBase, commitsAhead: 0, touched: [], changesTree: false };
		const raw = ["--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff", "--no-textconv"];
		const [count, log, net] = await Promise.all([
			run(["rev-list", "--count", `${this.baseSha}..${sha}`]),
			run(["log", ...raw, "-m", "--format=", `${this.baseSha}..${sha}`]),
			run(["diff-tree", "-r", ...raw, this.baseSha, sha]),
		]);
		return {
			onBase,
			commitsAhead: Number(count),
			touched: [...parseRaw(log), ...parseRaw(net)],
			changesTree: parseRaw(net).length > 0,
		};
	}

	/**
	 * Where the commits between the base and `sha` hold one of `secrets` (verbatim or encoded): the
	 * paths of the files whose new content does, and "a commit message". Every new file content in
	 * the pushed history is read, not only the last commit's.
	 */
	async secretsIn(sha: string, secrets: readonly string[]): Promise<string[]> {
		if (!secrets.length) return [];
		const run = (args: string[], input?: string) =>
			this.git.run(this.dir, args, { task: true, input });
		const range = `${this.baseSha}..${sha}`;
		const found: string[] = [];
		if (findSecrets(await run(["log", "--format=%B", range]), secrets).length)
			found.push("a commit message");
		// Object ids alone (a path may hold a newline), then their types, one per line.
		const oids = (await run(["rev-list", "--objects", "--no-object-names", range])).split("\n");
		const blobs = (
			await run(["cat-file", "--batch-check=%(objectname) %(objecttype)"], oids.join("\n"))
		)
			.split("\n")
			.flatMap((l) => (l.endsWith(" blob") ? [l.slice(0, -5)] : []));
		// One read of every new content; a hit is then traced to its files.
		if (
			!blobs.length ||
			!findSecrets(await run(["cat-file", "--batch"], blobs.join("\n")), secrets).length
		)
			return found;
		const names = new Map(
			(await run(["rev-list", "--objects", range]))
				.split("\n")
				.map((l) => [l.slice(0, l.indexOf(" ")), l.slice(l.indexOf(" ") + 1)] as const),
		);
		for (const oid of blobs)
			if (findSecrets(await run(["cat-file", "blob", oid]), secrets).length)
				found.push(names.get(oid) ?? oid);
		return found;
	}

	/** Pushes `sha` to the branch (Lisa owns it: a retried attempt replaces an earlier push). */
	async push(sha: string, branch: string): Promise<void> {
		const ref = `refs/heads/${branch}`;
		await this.git.run(this.dir, ["push", "--force", "--quiet", "--", this.url, `${sha}:${ref}`], {
			remote: true,
		});
		await this.landed(ref, sha);
	}

	/**
	 * Adds `sha` on top of a branch others push to too (a follow-up round's pull request,
	 * docs/follow-ups.md › Follow-ups): only a fast-forward from the base, the head the work started
	 * from, and only while the branch is still there. The lease makes git's update a compare-and-swap
	 * on the base: a branch that moved on (someone pushed) or back (someone dropped commits) is left
	 * as it is, and BranchMoved says where it went. No `--force`: nothing anyone pushed is ever
	 * replaced.
	 */
	async advance(sha: string, branch: string): Promise<void> {
		const ref = `refs/heads/${branch}`;
		const run = (args: string[]) => this.git.run(this.dir, args, { task: true });
		// The gates judged this already; a push that is not a fast-forward is never tried.
		await run(["merge-base", "--is-ancestor", this.baseSha, sha]).catch(() => {
			throw new Error(`${sha} does not build on ${this.baseSha}: it is not a fast-forward`);
		});
		try {
			await this.git.run(
				this.dir,
				[
					"push",
					"--quiet",
					`--force-with-lease=${ref}:${this.baseSha}`,
					"--",
					this.url,
					`${sha}:${ref}`,
				],
				{ remote: true },
			);
		} catch (err) {
			const at = await this.remoteAt(ref).catch(() => this.baseSha);
			if (at !== this.baseSha) throw new BranchMoved(branch, this.baseSha, at);
			throw err;
		}
		await this.landed(ref, sha);
	}

	private async remoteAt(ref: string): Promise<string> {
		const remote = await this.git.run(this.dir, ["ls-remote", "--", this.url, ref], {
			remote: true,
		});
		return remote.split("\t")[0] ?? "";
	}

	/** The remote branch is at `sha` now, or the push did not do what it said. */
	private async landed(ref: string, sha: string): Promise<void> {
		const at = await this.remoteAt(ref);
		if (at !== sha)
			throw new Error(`after the push the remote ${ref} is at ${at || "nothing"}, not ${sha}`);
	}
}

/** The branch is no longer at the head the work started from: someone else pushed to it. */
export class BranchMoved extends Error {
	constructor(
		readonly branch: string,
		readonly from: string,
		/** Where the branch is now ("" when it was deleted). */
		readonly at: string,
	) {
		super(
			`the branch ${branch} moved while the round ran (from ${from.slice(0, 12)} to ${at ? at.slice(0, 12) : "nothing: it was deleted"}): someone else pushed to it, and Lisa never overwrites their commits`,
		);
		this.name = "BranchMoved";
	}
}
