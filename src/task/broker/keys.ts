import { MODEL_ENDPOINTS } from "../../config/egress";
import type { ProviderName } from "../../config/schema";
import type { KeyHeader, ModelApi } from "./apis";
import type { Lease, Upstream } from "./broker";

// Which model keys the broker keeps from each provider's CLI (docs/security.md › Security): the
// variable that holds the key, the variable the CLI (or the config Lisa writes for it) reads the
// endpoint from, and the endpoint when that is unset. The agent gets the lease's key and URL in
// their place. Keys not listed here (Claude's OAuth token, Bedrock, Vertex credentials) reach the
// agent as before.

interface BrokeredKey {
	key: string;
	base: string;
	api: ModelApi;
	header: KeyHeader;
	/** The endpoint when `base` is unset; none: brokered only with `base` set. */
	official?: string;
}

const {
	anthropic: ANTHROPIC,
	openai: OPENAI,
	gemini: GEMINI,
	openrouter: OPENROUTER,
} = MODEL_ENDPOINTS;

const BROKERED_KEYS: Record<ProviderName, readonly BrokeredKey[]> = {
	claude: [
		{
			key: "ANTHROPIC_API_KEY",
			base: "ANTHROPIC_BASE_URL",
			api: "anthropic",
			header: "x-api-key",
			official: ANTHROPIC,
		},
		{
			key: "ANTHROPIC_AUTH_TOKEN",
			base: "ANTHROPIC_BASE_URL",
			api: "anthropic",
			header: "bearer",
			official: ANTHROPIC,
		},
	],
	codex: [
		{
			key: "OPENAI_API_KEY",
			base: "OPENAI_BASE_URL",
			api: "responses",
			header: "bearer",
			official: OPENAI,
		},
		{
			key: "CODEX_API_KEY",
			base: "OPENAI_BASE_URL",
			api: "responses",
			header: "bearer",
			official: OPENAI,
		},
	],
	gemini: [
		{
			key: "GEMINI_API_KEY",
			base: "GOOGLE_GEMINI_BASE_URL",
			api: "gemini",
			header: "x-goog-api-key",
			official: GEMINI,
		},
		{
			key: "GOOGLE_API_KEY",
			base: "GOOGLE_GEMINI_BASE_URL",
			api: "gemini",
			header: "x-goog-api-key",
			official: GEMINI,
		},
	],
	// OpenCode reads the endpoints from the config Lisa writes for the run (opencode.ts).
	opencode: [
		{ key: "OPENCODE_LISA_API_KEY", base: "OPENCODE_LISA_BASE_URL", api: "chat", header: "bearer" },
		{
			key: "ANTHROPIC_API_KEY",
			base: "OPENCODE_ANTHROPIC_BASE_URL",
			api: "anthropic",
			header: "x-api-key",
			official: `${ANTHROPIC}/v1`,
		},
		{
			key: "OPENAI_API_KEY",
			base: "OPENCODE_OPENAI_BASE_URL",
			api: "responses",
			header: "bearer",
			official: OPENAI,
		},
		{
			key: "OPENROUTER_API_KEY",
			base: "OPENCODE_OPENROUTER_BASE_URL",
			api: "chat",
			header: "bearer",
			official: OPENROUTER,
		},
	],
	builtin: [{ key: "LISA_LLM_API_KEY", base: "LISA_LLM_BASE_URL", api: "chat", header: "bearer" }],
};

/** An endpoint a run reaches through the broker, and the variables that stand for it. */
export interface BrokerRoute {
	upstream: Upstream;
	base: string;
	/** Every key variable set for it: all get the lease's key. */
	keys: string[];
}

/**
 * What a provider's run reaches through the broker, and the key variables it must not see: every
 * one the broker keeps for the provider, set or not brokered (a key without its endpoint). Gemini
 * on Vertex AI (`GOOGLE_GENAI_USE_VERTEXAI`) is not brokered: its key reaches the CLI.
 */
export function brokerPlan(
	provider: ProviderName,
	env: NodeJS.ProcessEnv,
): { routes: BrokerRoute[]; hidden: string[] } {
	if (provider === "gemini" && /^(1|true)$/i.test(env.GOOGLE_GENAI_USE_VERTEXAI ?? ""))
		return { routes: [], hidden: [] };
	const routes: BrokerRoute[] = [];
	for (const b of BROKERED_KEYS[provider]) {
		const key = env[b.key];
		const base = env[b.base] || b.official;
		if (!key || !base) continue;
		// One endpoint per base variable, with the first key set for it; the others are replaced too.
		const known = routes.find((r) => r.base === b.base);
		if (known) known.keys.push(b.key);
		else
			routes.push({
				upstream: { api: b.api, base, key, header: b.header },
				base: b.base,
				keys: [b.key],
			});
	}
	return { routes, hidden: BROKERED_KEYS[provider].map((b) => b.key) };
}

/**
 * The agent's environment without the provider's keys, and with the lease's key and URLs in place
 * of the routes' (`routes[i]` is the lease's `upstreams[i]`).
 */
export function leasedEnv(
	env: NodeJS.ProcessEnv,
	plan: ReturnType<typeof brokerPlan>,
	lease: Lease | undefined,
): NodeJS.ProcessEnv {
	const out = { ...env };
	for (const k of plan.hidden) delete out[k];
	if (lease)
		plan.routes.forEach((r, i) => {
			for (const k of r.keys) out[k] = lease.key;
			out[r.base] = lease.url(i);
		});
	return out;
}
