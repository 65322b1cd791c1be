import { builtinConfig, runBuiltinAgent } from "../builtin/agent";
import { type AgentResult, type AgentRunOptions, commandEnv, type Provider } from "../provider";

/** The built-in agent behind the provider interface; its endpoint comes from `LISA_LLM_*`. */
export const builtin: Provider = {
	name: "builtin",
	async unavailable(env, model) {
		return builtinConfig(env, model ?? env.LISA_LLM_MODEL)
			? undefined
			: "builtin: LISA_LLM_BASE_URL and LISA_LLM_MODEL are not set (not installed)";
	},
	async run(prompt: string, opts: AgentRunOptions): Promise<AgentResult> {
		const cfg = builtinConfig(opts.env, opts.model ?? opts.env.LISA_LLM_MODEL);
		if (!cfg)
			return {
				ok: false,
				output: "builtin: LISA_LLM_BASE_URL and LISA_LLM_MODEL are not set (not installed)",
				exitCode: null,
				timedOut: false,
				transient: true,
			};
		return runBuiltinAgent(prompt, cfg, {
			cwd: opts.cwd,
			env: commandEnv(opts.env),
			timeoutMs: opts.timeoutMs,
			onOutput: opts.onOutput,
			signal: opts.signal,
			user: opts.user,
			onUsage: opts.onUsage,
		});
	},
};
