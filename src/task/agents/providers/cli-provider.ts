import { existsSync } from "node:fs";
import { chown, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ProviderName } from "../../../config/schema";
import { promptFilePointer } from "../../prompts/prompt";
import type { AgentUser } from "../../sandbox/process";
import { runProcess } from "../../sandbox/process";
import {
	type AgentErrorKind,
	type AgentReport,
	type AgentResult,
	type AgentRunOptions,
	type LiveUsage,
	MAX_PROMPT_STDIN_BYTES,
	type Provider,
	TRANSIENT_ERROR_KINDS,
} from "../provider";

/** Reads a CLI's machine-readable output (JSON lines on stdout) while it runs. */
export interface OutputReader {
	/** One line of stdout: the readable text to show and keep for it, if any. */
	line(line: string): string | undefined;
	/** Once the CLI has exited: what it reported (gemini's exit code is its API error's status). */
	report(exit?: { code: number | null }): AgentReport;
	/** The usage so far, where the CLI streams it; absent where it reports usage only at the end. */
	usage?(): LiveUsage | undefined;
}

/** One agent CLI: its program, the argv Lisa runs it with, and how its output reads. */
export interface CliSpec {
	name: ProviderName;
	bin: string;
	argv(opts: AgentRunOptions): string[];
	reader(): OutputReader;
	/**
	 * Settings the CLI needs before a run, written where only this run reads them (its home or the
	 * scratch directory); returns the variables that point the CLI at them.
	 */
	prepare?(opts: AgentRunOptions): Promise<NodeJS.ProcessEnv>;
	/**
	 * Claude Code can create and manage its own worktree (docs/agent-task.md › Providers and models).
	 */
	nativeWorktree?: boolean;
	/** The argv that prints the help listing the flags `argv` uses (checked by `cliFlagCheck`). */
	help: string[];
}

/**
 * An agent CLI run as `<bin> <argv…>` (docs/agent-task.md › Providers and models): spawned without
 * a shell, in its own process group, in its machine-readable mode. The prompt goes in on stdin,
 * never in argv, which every user can read in /proc/<pid>/cmdline. A prompt too long for stdin goes
 * into a file only the agent's user can read, outside the worktree, and the agent is told to read
 * it: never cut.
 */
export class CliProvider implements Provider {
	readonly name: ProviderName;
	readonly supportsNativeWorktree: boolean;

	constructor(readonly spec: CliSpec) {
		this.name = spec.name;
		this.supportsNativeWorktree = spec.nativeWorktree === true;
	}

	async unavailable(
		env: NodeJS.ProcessEnv,
		_model?: string,
		user?: AgentUser,
	): Promise<string | undefined> {
		const { bin } = this.spec;
		const r = await runProcess(bin, ["--version"], {
			cwd: user?.home ?? process.cwd(),
			env,
			timeoutMs: 30_000,
			user,
		});
		if (r.code === 0) return undefined;
		if (r.error?.includes("ENOENT")) return `${bin} is not installed or not in PATH`;
		if (r.error?.includes("EACCES"))
			return `${bin} cannot be run${user ? ` by the agent's uid ${user.uid}` : ""}: EACCES on ${firstOnPath(bin, env.PATH) ?? bin} (the file, or a folder above it, is closed to that user)`;
		return `\`${bin} --version\` failed (${r.error ?? r.signal ?? `exit ${r.code}`}): ${r.output.trim().split("\n").at(-1) ?? ""}`;
	}

	async run(prompt: string, opts: AgentRunOptions): Promise<AgentResult> {
		const bytes = Buffer.byteLength(prompt);
		const file =
			bytes > MAX_PROMPT_STDIN_BYTES
				? path.join(opts.scratchDir, `prompt-${this.name}-${Date.now()}.md`)
				: undefined;
		if (file) {
			// "wx": never through something already at that name in the agent's directory.
			await writeFile(file, prompt, { mode: 0o600, flag: "wx" });
			if (opts.user) await chown(file, opts.user.uid, opts.user.gid);
		}
		const reader = this.spec.reader();
		// The usage last passed on: a line that changes nothing (most of them) calls nothing.
		let last = "";
		const read = (line: string) => {
			const shown = reader.line(line);
			const live = opts.onUsage && reader.usage?.();
			const key = live ? JSON.stringify(live) : "";
			if (live && key !== last) {
				last = key;
				opts.onUsage?.(live);
			}
			return shown;
		};
		try {
			const env = { ...opts.env, ...(await this.spec.prepare?.(opts)) };
			const r = await runProcess(this.spec.bin, this.spec.argv(opts), {
				stdin: file ? promptFilePointer(file, bytes) : prompt,
				cwd: opts.cwd,
				env,
				timeoutMs: opts.timeoutMs,
				onOutput: opts.onOutput,
				signal: opts.signal,
				user: opts.user,
				stdoutLines: read,
			});
			const report = reader.report({ code: r.code });
			const notFound = r.error?.includes("ENOENT")
				? `${this.spec.bin}: command not found (not installed or not in PATH)\n`
				: "";
			const failed = report.error
				? `${this.name} reported ${report.error.kind}: ${report.error.message}\n`
				: "";
			return {
				ok: r.code === 0 && !r.timedOut && !report.error,
				output: `${notFound}${r.error && !notFound ? `${r.error}\n` : ""}${r.output}${failed}`,
				exitCode: r.code,
				signal: r.signal,
				timedOut: r.timedOut,
				transient: report.error ? TRANSIENT_ERROR_KINDS.includes(report.error.kind) : undefined,
				report,
			};
		} finally {
			if (file) await rm(file, { force: true });
		}
	}
}

/** The first `bin` on PATH, whoever may run it: the one an EACCES is about. */
function firstOnPath(bin: string, pathVar = ""): string | undefined {
	return pathVar
		.split(path.delimiter)
		.filter(Boolean)
		.map((dir) => path.join(dir, bin))
		.find((file) => existsSync(file));
}

/** `[flag, model]` when the spec names a model. */
export const modelArgs = (opts: AgentRunOptions, flag: string): string[] =>
	opts.model ? [flag, opts.model] : [];

/**
 * The error kind an API's HTTP status stands for, where the CLI reports only the status: the next
 * model is worth trying after a rate limit, a server error or a missing model.
 */
export function statusKind(status: number): AgentErrorKind | undefined {
	if (status === 429) return "rate_limit";
	if (status === 401 || status === 403) return "auth";
	if (status === 404) return "model_not_found";
	// A timed-out request is worth trying again, as for every HTTP client (isTransientStatus).
	if (status === 408) return "network";
	if (status >= 500) return "overloaded";
	if (status >= 400) return "invalid_request";
	return undefined;
}
