// Runs a real agent CLI through Lisa's provider code, in a throwaway repository on Lisa's branch:
// the argv, the environment allow-list, the cwd, the agent's own user and Lisa's reading of the
// output are the production ones. Only the model is a scripted local server.
import { chmod, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AgentUidPool, agentUidRange, type UidRange } from "../../infra/local/agent-users";
import type { ProviderName } from "../../shared/config/schema";
import { MANIFEST_FILE } from "../../shared/domain/prompt";
import { type AgentUser, handOver, prepareHome } from "../../tasks/agent/identity";
import { PROVIDERS } from "../../tasks/agent/providers";
import {
	type AgentResult,
	type AgentRunOptions,
	agentEnv,
} from "../../tasks/agent/providers/provider";
import { git } from "./git";

/**
 * Where the agent CLIs are: the pinned ones `npm install` put in `agents/` (the versions the image
 * uses), or those `npm run check:agents` installed (LISA_AGENT_CLI_BIN).
 */
export const AGENT_CLI_BIN =
	process.env.LISA_AGENT_CLI_BIN ??
	fileURLToPath(new URL("../../agents/node_modules/.bin", import.meta.url));

export const LISA_BRANCH = "lisa/eng-7-add-greeting";

export interface CliSandbox {
	/** The repository, checked out on Lisa's branch with one commit on `main`. */
	repo: string;
	scratch: string;
	home: string;
	user?: AgentUser;
	/** Runs the provider as the task does, with the variables given (a base URL, a key). */
	run(
		name: ProviderName,
		prompt: string,
		vars: NodeJS.ProcessEnv,
		opts?: Partial<AgentRunOptions>,
	): Promise<AgentResult & { shown: string }>;
	/** Subjects of the commits on Lisa's branch since `main`, newest first. */
	commits(): Promise<string[]>;
	/** The manifest the agent wrote in the repository root, parsed. */
	manifest(dir?: string): Promise<unknown>;
	cleanup(): Promise<void>;
}

/**
 * A sandbox for one CLI run. With `asAgentUser` (the task as root) the CLI runs as a uid of the
 * local pool, with a fresh home, as `npm start` runs it; otherwise as the test's own user.
 */
export async function cliSandbox(opts: { asAgentUser?: boolean } = {}): Promise<CliSandbox> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-cli-"));
	await chmod(dir, 0o711);
	const repo = path.join(dir, "repo");
	const scratch = path.join(dir, "scratch");
	const home = path.join(dir, "home");
	await mkdir(repo);
	await mkdir(scratch, { mode: 0o700 });
	await git(repo, "init", "--initial-branch", "main");
	await git(repo, "commit", "--allow-empty", "-m", "chore: initial commit");
	await git(repo, "checkout", "-b", LISA_BRANCH);

	let user: AgentUser | undefined;
	let pool: AgentUidPool | undefined;
	if (opts.asAgentUser) {
		pool = new AgentUidPool(agentUidRange(undefined, true) as UidRange);
		const uid = await pool.take();
		user = { uid, gid: uid, home };
		await prepareHome(user, home);
		await handOver([repo, scratch], user);
	} else await mkdir(home, { mode: 0o700 });

	return {
		repo,
		scratch,
		home,
		user,
		async run(name, prompt, vars, more = {}) {
			const base = { PATH: `${AGENT_CLI_BIN}:${process.env.PATH}`, HOME: home, ...vars };
			let shown = "";
			const result = await PROVIDERS[name].run(prompt, {
				cwd: repo,
				env: agentEnv(name, base),
				timeoutMs: 120_000,
				scratchDir: scratch,
				user,
				onOutput: (chunk) => {
					shown += chunk;
				},
				...more,
			});
			return { ...result, shown };
		},
		async commits() {
			const log = await git(repo, "log", "--format=%s", `main..${LISA_BRANCH}`);
			return log.split("\n").filter(Boolean);
		},
		async manifest(at = repo) {
			return JSON.parse(await readFile(path.join(at, MANIFEST_FILE), "utf8"));
		},
		async cleanup() {
			if (user) await pool?.give(user.uid);
			await rm(dir, { recursive: true, force: true });
		},
	};
}
