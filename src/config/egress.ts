import { codeHost, serverOf } from "../domain/egress";
import { parseConfigText } from "./load";
import type { ProviderName } from "./schema";

// Where the model APIs are, for the broker's defaults (src/task/broker/keys.ts) and for the egress
// allow-list of an AWS stage with LISA_AGENT_EGRESS=allow-list (infra/agent.ts), which the agent
// tasks reach everything but AWS through.

export const MODEL_ENDPOINTS = {
	anthropic: "https://api.anthropic.com",
	openai: "https://api.openai.com/v1",
	gemini: "https://generativelanguage.googleapis.com",
	openrouter: "https://openrouter.ai/api/v1",
} as const;

/** Each provider's endpoints, and the variable of the deploy that moves one elsewhere. */
const PROVIDER_ENDPOINTS: Record<ProviderName, readonly { official?: string; base: string }[]> = {
	claude: [{ official: MODEL_ENDPOINTS.anthropic, base: "ANTHROPIC_BASE_URL" }],
	codex: [{ official: MODEL_ENDPOINTS.openai, base: "OPENAI_BASE_URL" }],
	gemini: [{ official: MODEL_ENDPOINTS.gemini, base: "GOOGLE_GEMINI_BASE_URL" }],
	opencode: [
		{ official: MODEL_ENDPOINTS.anthropic, base: "OPENCODE_ANTHROPIC_BASE_URL" },
		{ official: MODEL_ENDPOINTS.openai, base: "OPENCODE_OPENAI_BASE_URL" },
		{ official: MODEL_ENDPOINTS.openrouter, base: "OPENCODE_OPENROUTER_BASE_URL" },
		{ base: "OPENCODE_LISA_BASE_URL" },
	],
	builtin: [{ base: "LISA_LLM_BASE_URL" }],
};

/**
 * The AWS egress proxy's allow-list (`host:port` or a host pattern): the code host and its API, the
 * model APIs of the config's `models`, each repository's `network.allow`, and `LISA_EGRESS_ALLOW`
 * (comma-separated) of the deploy. One list serves every task and both phases: the registries
 * `setup` needs must be named.
 */
export function deployEgressAllowList(
	configText: string,
	configFile: string,
	env: NodeJS.ProcessEnv,
): string[] {
	const config = parseConfigText(configText, configFile);
	const web = codeHost(env.GITHUB_API_URL);
	const api = env.GITHUB_API_URL ? serverOf(env.GITHUB_API_URL) : "api.github.com:443";
	const providers = new Set(config.models.map((m) => m.split(":")[0] as ProviderName));
	const models = [...providers].flatMap(
		(p) =>
			PROVIDER_ENDPOINTS[p]?.flatMap((e) => serverOf(env[e.base] || e.official || "") ?? []) ?? [],
	);
	const extra = (env.LISA_EGRESS_ALLOW ?? "").split(",").map((h) => h.trim().toLowerCase());
	return [
		...new Set([
			`${web}:443`,
			...(api ? [api] : []),
			...models,
			...config.repos.flatMap((r) => r.network.allow),
			...extra.filter(Boolean),
		]),
	];
}
