import type { ProviderName } from "../../../shared/config/schema";
import { runProcess } from "../process";
import {
	type AgentResult,
	type AgentRunOptions,
	MAX_PROMPT_ARG_BYTES,
	type Provider,
} from "./provider";

/** An agent CLI run as `<bin> <argv…>` with the prompt as one argument (DESIGN §9). */
export class CliProvider implements Provider {
	constructor(
		readonly name: ProviderName,
		private readonly bin: string,
		private readonly argv: (prompt: string, opts: AgentRunOptions) => string[],
		readonly supportsNativeWorktree = false,
	) {}

	async isAvailable(env: NodeJS.ProcessEnv): Promise<boolean> {
		const r = await runProcess(this.bin, ["--version"], {
			cwd: process.cwd(),
			env,
			timeoutMs: 15_000,
		});
		return r.code === 0;
	}

	async run(prompt: string, opts: AgentRunOptions): Promise<AgentResult> {
		if (Buffer.byteLength(prompt) > MAX_PROMPT_ARG_BYTES)
			throw new Error(
				`the prompt is ${Buffer.byteLength(prompt)} bytes, over the ${MAX_PROMPT_ARG_BYTES}-byte argument limit`,
			);
		const r = await runProcess(this.bin, this.argv(prompt, opts), {
			cwd: opts.cwd,
			env: opts.env,
			timeoutMs: opts.timeoutMs,
			onOutput: opts.onOutput,
			signal: opts.signal,
		});
		const notFound = r.error?.includes("ENOENT")
			? `${this.bin}: command not found (not installed or not in PATH)\n`
			: "";
		return {
			ok: r.code === 0 && !r.timedOut,
			output: `${notFound}${r.output}${r.timedOut ? "\n[lisa-supervisor] the agent timed out" : ""}`,
			exitCode: r.code,
			timedOut: r.timedOut,
		};
	}
}

const model = (opts: AgentRunOptions, flag: string) => (opts.model ? [flag, opts.model] : []);

export const claude = new CliProvider(
	"claude",
	"claude",
	(prompt, opts) => [
		"-p",
		"--dangerously-skip-permissions",
		...model(opts, "--model"),
		...(opts.useNativeWorktree ? ["--worktree"] : []),
		prompt,
	],
	true,
);

export const PROVIDERS: Partial<Record<ProviderName, Provider>> = { claude };
