import { chown, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ProviderName } from "../../../shared/config/schema";
import { promptFilePointer } from "../../../shared/domain/prompt";
import type { AgentUser } from "../identity";
import { runProcess } from "../process";
import {
	type AgentResult,
	type AgentRunOptions,
	MAX_PROMPT_ARG_BYTES,
	type Provider,
} from "./provider";

/**
 * An agent CLI run as `<bin> <argv…>` (README › Providers and models): spawned without a shell, stdin closed, in its
 * own process group. A prompt too long for one argument goes into a file outside the worktree and
 * the agent is told to read it: never silently cut.
 */
class CliProvider implements Provider {
	constructor(
		readonly name: ProviderName,
		private readonly bin: string,
		private readonly argv: (prompt: string, opts: AgentRunOptions) => string[],
		readonly supportsNativeWorktree = false,
	) {}

	async isAvailable(env: NodeJS.ProcessEnv, _model?: string, user?: AgentUser): Promise<boolean> {
		const r = await runProcess(this.bin, ["--version"], {
			cwd: user?.home ?? process.cwd(),
			env,
			timeoutMs: 30_000,
			user,
		});
		return r.code === 0;
	}

	async run(prompt: string, opts: AgentRunOptions): Promise<AgentResult> {
		const bytes = Buffer.byteLength(prompt);
		const file =
			bytes > MAX_PROMPT_ARG_BYTES
				? path.join(opts.scratchDir, `prompt-${this.name}-${Date.now()}.md`)
				: undefined;
		if (file) {
			// "wx": never through something already at that name in the agent's directory.
			await writeFile(file, prompt, { mode: 0o600, flag: "wx" });
			if (opts.user) await chown(file, opts.user.uid, opts.user.gid);
		}
		try {
			const r = await runProcess(
				this.bin,
				this.argv(file ? promptFilePointer(file, bytes) : prompt, opts),
				{
					cwd: opts.cwd,
					env: opts.env,
					timeoutMs: opts.timeoutMs,
					onOutput: opts.onOutput,
					signal: opts.signal,
					user: opts.user,
				},
			);
			const notFound = r.error?.includes("ENOENT")
				? `${this.bin}: command not found (not installed or not in PATH)\n`
				: "";
			return {
				ok: r.code === 0 && !r.timedOut,
				output: `${notFound}${r.error && !notFound ? `${r.error}\n` : ""}${r.output}`,
				exitCode: r.code,
				signal: r.signal,
				timedOut: r.timedOut,
			};
		} finally {
			if (file) await rm(file, { force: true });
		}
	}
}

const model = (opts: AgentRunOptions, flag: string) => (opts.model ? [flag, opts.model] : []);

// Claude Code's `--worktree` takes an optional name: it is always given, or the prompt would be
// taken for the name.
export const claude = new CliProvider(
	"claude",
	"claude",
	(prompt, opts) => [
		"-p",
		"--dangerously-skip-permissions",
		...model(opts, "--model"),
		...(opts.nativeWorktree ? ["--worktree", opts.nativeWorktree] : []),
		prompt,
	],
	true,
);

export const gemini = new CliProvider("gemini", "gemini", (prompt, opts) => [
	"--yolo",
	...model(opts, "-m"),
	"-p",
	prompt,
]);

export const opencode = new CliProvider("opencode", "opencode", (prompt, opts) => [
	"run",
	...model(opts, "-m"),
	prompt,
]);

export const codex = new CliProvider("codex", "codex", (prompt, opts) => [
	"exec",
	"--full-auto",
	...model(opts, "-m"),
	prompt,
]);
