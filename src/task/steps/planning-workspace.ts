import { lstat, mkdir, opendir, rm } from "node:fs/promises";
import path from "node:path";
import type { RepoConfig } from "../../config/schema";
import { type Attempt, checkoutFailure, gitFor } from "../context/attempt";
import { launchedRepo } from "../context/repos";
import { readAgentFile } from "../sandbox/files";
import type { Git } from "../sandbox/git";
import { handOver } from "../sandbox/identity";

/** A file the agent was asked to write: its text, or why there is none. */
export type AgentFile = { text: string } | { absent: true } | { error: string };

/** A repository's checkout as the prompts list it: `dir` is relative to the agent's directory. */
export interface Checkout {
	name: string;
	dir: string;
	baseBranch: string;
	match: readonly string[];
}

/**
 * `<workspace>/plan`: the agent's directory (a git repository, as some CLIs require one) with the
 * files it writes and `repos/<name>`, a detached checkout of each repo's base. The planning step of
 * a multi-repo run and an epic's phases work here (docs/multi-repo.md › Multi-repo runs,
 * docs/epics.md › Epics).
 */
export class PlanningWorkspace {
	readonly dir: string;
	readonly scratch: string;
	private readonly heads = new Map<string, string>();

	constructor(
		private readonly a: Attempt,
		root: string,
		private readonly repos: readonly RepoConfig[],
		/** Who works here, for the timeline: "planning", "research". */
		private readonly purpose = "planning",
	) {
		this.dir = path.join(root, "plan");
		this.scratch = path.join(root, "scratch");
	}

	private git(url?: string): Git {
		return gitFor(this.a, url);
	}

	private checkout(name: string): string {
		return path.join(this.dir, checkoutDir(name));
	}

	/** Each repository's checkout, as the prompts list it. */
	checkouts(): Checkout[] {
		return this.repos.map((r) => ({
			name: r.name,
			dir: checkoutDir(r.name),
			baseBranch: r.base_branch,
			match: r.match,
		}));
	}

	/** Everything as the task's user (blobs fetched), then handed to the agent's user. */
	async prepare(): Promise<void> {
		await rm(this.dir, { recursive: true, force: true });
		await mkdir(path.join(this.dir, "repos"), { recursive: true });
		await mkdir(this.scratch, { recursive: true });
		await this.git().run(this.dir, ["init", "--quiet"], { task: true });
		for (const repo of this.repos) {
			// Where the token goes comes from the launch; the snapshot names the base to check out.
			const { url } = launchedRepo(this.a.repos, repo.name);
			const git = this.git(url);
			const dir = this.checkout(repo.name);
			try {
				await git.run(
					this.dir,
					["clone", "--filter=blob:none", "--no-checkout", "--quiet", "--", url, dir],
					{ remote: true },
				);
				await git.run(dir, ["checkout", "--quiet", "--detach", `origin/${repo.base_branch}`], {
					remote: true,
				});
				this.heads.set(repo.name, await git.run(dir, ["rev-parse", "HEAD"], { task: true }));
			} catch (err) {
				throw checkoutFailure(repo.name, err);
			}
		}
		if (this.a.scope.user) await handOver([this.dir, this.scratch], this.a.scope.user);
	}

	/** The absolute path of a file the agent writes under `dir`. */
	file(name: string): string {
		return path.join(this.dir, name);
	}

	/** Removes what the agent wrote at these paths (relative to `dir`) before its next try. */
	async clear(...names: string[]): Promise<void> {
		for (const name of names) await rm(path.join(this.dir, name), { recursive: true, force: true });
	}

	/** A file the agent wrote under `dir`, read safely (no link followed) and at most `maxBytes`. */
	async read(name: string, maxBytes: number): Promise<AgentFile> {
		try {
			return { text: await readAgentFile(path.join(this.dir, name), maxBytes) };
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code === "ENOENT") return { absent: true };
			return { error: `${name} could not be read: ${readError(err)}` };
		}
	}

	/**
	 * The names in a directory the agent wrote under `dir`, sorted, at most `max`; undefined when it
	 * is absent. Refused when it is not a directory of its own (a link could lead anywhere).
	 */
	async list(name: string, max: number): Promise<string[] | { error: string } | undefined> {
		const at = path.join(this.dir, name);
		const st = await lstat(at).catch(() => undefined);
		if (!st) return undefined;
		if (!st.isDirectory()) return { error: `${name}/ is not a directory (a link is not followed)` };
		// Read one entry at a time: the agent could have made millions.
		const names: string[] = [];
		for await (const entry of await opendir(at)) {
			if (names.length === max)
				return { error: `${name}/ holds more than ${max} entries: write one file per task` };
			names.push(entry.name);
		}
		return names.sort();
	}

	/** Read while the agent works: without optional locks, so it never holds the agent's index.lock. */
	async fingerprint(): Promise<string> {
		return this.git().run(
			this.dir,
			["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"],
			{ timeoutMs: 10_000 },
		);
	}

	/** Puts back any checkout the agent changed (noted on the run): planning never implements. */
	async restore(): Promise<void> {
		const changed: string[] = [];
		for (const [name, head] of this.heads) {
			const git = this.git();
			const dir = this.checkout(name);
			const [now, status] = await Promise.all([
				git.run(dir, ["rev-parse", "HEAD"]).catch(() => ""),
				git.run(dir, ["status", "--porcelain", "--untracked-files=all"]).catch(() => "?"),
			]);
			if (now === head && !status) continue;
			changed.push(name);
			await git.run(dir, ["checkout", "--quiet", "--force", "--detach", head]);
			await git.run(dir, ["clean", "-ffdxq"]);
		}
		if (changed.length)
			await this.a.timeline.add(
				"plan.discarded",
				`the ${this.purpose} agent changed ${changed.join(", ")}; the changes were discarded (${this.purpose} does not implement)`,
			);
	}
}

const checkoutDir = (name: string) => `repos/${name}`;

/** readAgentFile's reason, or the system's words for an error of its own (ELOOP: a link). */
const readError = (err: unknown): string => {
	const code = (err as NodeJS.ErrnoException).code;
	if (code === "ELOOP") return "it is a symbolic link, which is not followed";
	return (err as Error).message;
};
