import type { AgentUser } from "./identity";
import { type ProcessResult, runProcess } from "./process";

// Git through argv arrays. A token reaches git only in commands that talk to the remote, through a
// credential helper reading the git process's own environment: never the remote URL, the agent's
// environment or the logs. Those commands ignore every config the agent could have written (global
// and system config, hooks) and the helper answers only for the configured host and protocol.
// With an agent user, those commands (and the few Lisa runs before handing the workspace over) run
// as the task's user; every other git command runs as the agent, in the agent's workspace.

const CREDENTIAL_HELPER = `!f() { test "$1" = get || exit 0; h=; p=; while IFS= read -r l && test -n "$l"; do case "$l" in host=*) h=\${l#host=} ;; protocol=*) p=\${l#protocol=} ;; esac; done; test "$h" = "$LISA_GIT_HOST" && test "$p" = "$LISA_GIT_PROTOCOL" || exit 0; echo username=x-access-token; echo "password=$LISA_GIT_TOKEN"; }; f`;

class GitError extends Error {
	constructor(
		readonly args: string[],
		readonly result: ProcessResult,
	) {
		super(
			`git ${args[0]} failed: ${result.truncated ? "its output was too long" : (result.error ?? result.output.trim().split("\n").slice(-3).join(" "))}`,
		);
		this.name = "GitError";
	}
}

/** A token and the remote it is for. */
export interface GitAuth {
	token: string;
	url: string;
}

/** Settings for a command that may use the token, layered over everything else git reads. */
export function authenticated(auth: GitAuth | undefined): {
	args: string[];
	env: NodeJS.ProcessEnv;
} {
	const env: NodeJS.ProcessEnv = { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
	const args = ["-c", "core.hooksPath=/dev/null"];
	let remote: URL | undefined;
	try {
		remote = auth ? new URL(auth.url) : undefined;
	} catch {}
	if (auth && remote && (remote.protocol === "https:" || remote.protocol === "http:")) {
		args.push("-c", "credential.helper=", "-c", `credential.helper=${CREDENTIAL_HELPER}`);
		env.LISA_GIT_TOKEN = auth.token;
		env.LISA_GIT_HOST = remote.host;
		env.LISA_GIT_PROTOCOL = remote.protocol.slice(0, -1);
	}
	return { args, env };
}

const MAX_STDOUT = 16 * 1024 * 1024;

export interface GitRunOptions {
	timeoutMs?: number;
	/**
	 * The command talks to the remote (or may fetch missing blobs of the partial clone): it runs as
	 * the task's user with the token and ignores what the agent could have configured.
	 */
	remote?: boolean;
	/** Runs as the task's user without the token: in a repository the agent does not own. */
	task?: boolean;
}

export class Git {
	constructor(
		private readonly baseEnv: NodeJS.ProcessEnv,
		private readonly auth?: GitAuth,
		readonly user?: AgentUser,
	) {}

	async run(cwd: string, args: string[], opts: GitRunOptions = {}): Promise<string> {
		const secure = opts.remote ? authenticated(this.auth) : undefined;
		const env: NodeJS.ProcessEnv = {
			...this.baseEnv,
			GIT_TERMINAL_PROMPT: "0",
			GIT_AUTHOR_NAME: this.baseEnv.GIT_AUTHOR_NAME ?? "Lisa",
			GIT_AUTHOR_EMAIL: this.baseEnv.GIT_AUTHOR_EMAIL ?? "lisa@users.noreply.github.com",
			GIT_COMMITTER_NAME: this.baseEnv.GIT_COMMITTER_NAME ?? "Lisa",
			GIT_COMMITTER_EMAIL: this.baseEnv.GIT_COMMITTER_EMAIL ?? "lisa@users.noreply.github.com",
			...secure?.env,
		};
		const result = await runProcess("git", [...(secure?.args ?? []), ...args], {
			cwd,
			env,
			timeoutMs: opts.timeoutMs ?? 10 * 60_000,
			maxOutput: MAX_STDOUT,
			user: opts.remote || opts.task ? undefined : this.user,
		});
		// A cut answer (a huge list of changed files) must not pass for the whole: the gates read it.
		if (result.code !== 0 || result.truncated) throw new GitError(args, result);
		return result.stdout.trim();
	}
}

/** git gets PATH/HOME and its own settings; the credential helper adds the token itself. */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const keep = [
		"PATH",
		"HOME",
		"LANG",
		"TMPDIR",
		"GIT_AUTHOR_NAME",
		"GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME",
		"GIT_COMMITTER_EMAIL",
		"GIT_SSH_COMMAND",
	];
	return Object.fromEntries(keep.flatMap((k) => (env[k] ? [[k, env[k]]] : [])));
}
