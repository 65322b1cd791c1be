import { PassThrough } from "node:stream";
import type { AgentUser } from "./process";
import { type ProcessOptions, type ProcessResult, runProcess } from "./process";

// Git through argv arrays. Every git command Lisa runs ignores what anyone but Lisa configured:
// no system or global config (an agent of the same user can write ~/.gitconfig), no hooks, no
// fsmonitor, no replace refs; the environment is a short allow-list (no proxies, askpass or
// GIT_* overrides). A token reaches git only in commands that talk to the remote, through Lisa's
// credential helper reading the git process's own environment — never a URL, the agent's
// environment or the logs — and the helper answers only for the remote's host and protocol.
// With an agent user, the commands that carry the token or write Lisa's own repositories run as
// the task's user; every other git command runs as the agent, in the agent's workspace.

const CREDENTIAL_HELPER = `!f() { test "$1" = get || exit 0; h=; p=; while IFS= read -r l && test -n "$l"; do case "$l" in host=*) h=\${l#host=} ;; protocol=*) p=\${l#protocol=} ;; esac; done; test "$h" = "$LISA_GIT_HOST" && test "$p" = "$LISA_GIT_PROTOCOL" || exit 0; echo username=x-access-token; echo "password=$LISA_GIT_TOKEN"; }; f`;

/** What every git command gets, whoever runs it. */
const ISOLATED_ENV: NodeJS.ProcessEnv = {
	GIT_CONFIG_NOSYSTEM: "1",
	GIT_CONFIG_GLOBAL: "/dev/null",
	GIT_NO_REPLACE_OBJECTS: "1",
	GIT_TERMINAL_PROMPT: "0",
};
const ISOLATED_ARGS = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"];

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

/** The token's settings for a command that talks to `auth.url` (nothing for other protocols). */
export function authenticated(auth: GitAuth | undefined): {
	args: string[];
	env: NodeJS.ProcessEnv;
} {
	// Helpers configured anywhere else are dropped first (an empty value resets the list).
	const args = ["-c", "credential.helper=", "-c", "credential.useHttpPath=false"];
	let remote: URL | undefined;
	try {
		remote = auth ? new URL(auth.url) : undefined;
	} catch {}
	if (!auth || !remote || (remote.protocol !== "https:" && remote.protocol !== "http:"))
		return { args, env: {} };
	return {
		args: [...args, "-c", `credential.helper=${CREDENTIAL_HELPER}`],
		env: {
			LISA_GIT_TOKEN: auth.token,
			LISA_GIT_HOST: remote.host,
			LISA_GIT_PROTOCOL: remote.protocol.slice(0, -1),
		},
	};
}

const MAX_STDOUT = 16 * 1024 * 1024;

export interface GitRunOptions {
	timeoutMs?: number;
	/**
	 * The command talks to the remote (or may fetch missing blobs of the partial clone): it runs as
	 * the task's user with the token.
	 */
	remote?: boolean;
	/** Runs as the task's user without the token: in a repository the agent does not own. */
	task?: boolean;
	/** Fed to git's stdin. */
	input?: string;
}

export class Git {
	constructor(
		private readonly baseEnv: NodeJS.ProcessEnv,
		private readonly auth?: GitAuth,
		readonly user?: AgentUser,
	) {}

	async run(cwd: string, args: string[], opts: GitRunOptions = {}): Promise<string> {
		const result = await this.spawn(cwd, args, opts, { maxOutput: MAX_STDOUT });
		// A cut answer (a huge list of changed files) must not pass for the whole: the gates read it.
		if (result.code !== 0 || result.truncated) throw new GitError(args, result);
		return result.stdout.trim();
	}

	/**
	 * `from`'s output piped into `to` (a pack made by one user, indexed by another): both must
	 * succeed. Returns `to`'s output.
	 */
	async pipe(
		from: { cwd: string; args: string[]; opts?: GitRunOptions },
		to: { cwd: string; args: string[]; opts?: GitRunOptions },
	): Promise<string> {
		const stream = new PassThrough();
		const [a, b] = await Promise.all([
			this.spawn(from.cwd, from.args, from.opts, { stdout: stream }),
			this.spawn(to.cwd, to.args, to.opts, { stdin: stream, maxOutput: MAX_STDOUT }),
		]);
		if (a.code !== 0) throw new GitError(from.args, a);
		if (b.code !== 0 || b.truncated) throw new GitError(to.args, b);
		return b.stdout.trim();
	}

	/** One git process: isolated, as the user `opts` says, with the token when it talks to the remote. */
	private spawn(
		cwd: string,
		args: string[],
		opts: GitRunOptions = {},
		io: Pick<ProcessOptions, "stdin" | "stdout" | "maxOutput"> = {},
	): Promise<ProcessResult> {
		const secure = opts.remote ? authenticated(this.auth) : { args: [], env: {} };
		return runProcess("git", [...ISOLATED_ARGS, ...secure.args, ...args], {
			cwd,
			env: {
				...this.baseEnv,
				GIT_AUTHOR_NAME: this.baseEnv.GIT_AUTHOR_NAME ?? "Lisa",
				GIT_AUTHOR_EMAIL: this.baseEnv.GIT_AUTHOR_EMAIL ?? "lisa@users.noreply.github.com",
				GIT_COMMITTER_NAME: this.baseEnv.GIT_COMMITTER_NAME ?? "Lisa",
				GIT_COMMITTER_EMAIL: this.baseEnv.GIT_COMMITTER_EMAIL ?? "lisa@users.noreply.github.com",
				...ISOLATED_ENV,
				...secure.env,
			},
			timeoutMs: opts.timeoutMs ?? 10 * 60_000,
			user: opts.remote || opts.task ? undefined : this.user,
			stdin: opts.input,
			...io,
		});
	}
}

/** git gets PATH/HOME, a locale and the identity and ssh settings given to Lisa; nothing else. */
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
