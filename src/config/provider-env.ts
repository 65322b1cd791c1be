import type { ProviderName } from "./schema";

// Which variables each agent provider's CLI reads (docs/agent-task.md › Providers and models): the
// agent gets these and the basics, nothing else of the task's environment; a local task inherits
// them from the stack.

/** Per provider: the variables its CLI needs. Nothing else of the task's environment reaches it. */
export const PROVIDER_ENV: Record<ProviderName, RegExp[]> = {
	claude: [/^ANTHROPIC_/, /^CLAUDE_CODE_/, /^CLAUDE_CONFIG_DIR$/, /^AWS_BEARER_TOKEN_BEDROCK$/],
	gemini: [
		/^GEMINI_/,
		/^GOOGLE_API_KEY$/,
		/^GOOGLE_GENAI_/,
		/^GOOGLE_CLOUD_(PROJECT|LOCATION)$/,
		/^GOOGLE_APPLICATION_CREDENTIALS$/,
		/^GOOGLE_(GEMINI|VERTEX)_BASE_URL$/,
	],
	opencode: [/^OPENCODE_/, /^ANTHROPIC_API_KEY$/, /^OPENAI_API_KEY$/, /^OPENROUTER_API_KEY$/],
	codex: [/^OPENAI_API_KEY$/, /^OPENAI_BASE_URL$/, /^CODEX_/],
	// The built-in agent runs inside the task: it reads its endpoint from these, and the commands it
	// runs get `commandEnv` without them.
	builtin: [/^LISA_LLM_/],
};
