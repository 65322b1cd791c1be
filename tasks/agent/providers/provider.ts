import type { ProviderName } from "../../../shared/config/schema";

export interface AgentRunOptions {
	cwd: string;
	model?: string;
	/** The environment the CLI gets: already reduced to what it needs. */
	env: NodeJS.ProcessEnv;
	timeoutMs: number;
	onOutput?: (chunk: string) => void;
	signal?: AbortSignal;
	useNativeWorktree?: boolean;
}

export interface AgentResult {
	ok: boolean;
	output: string;
	exitCode: number | null;
	timedOut: boolean;
}

export interface Provider {
	readonly name: ProviderName;
	readonly supportsNativeWorktree?: boolean;
	isAvailable(env: NodeJS.ProcessEnv): Promise<boolean>;
	run(prompt: string, opts: AgentRunOptions): Promise<AgentResult>;
}

/** Linux caps one argv string at 128 KiB; stay well below it. */
export const MAX_PROMPT_ARG_BYTES = 100_000;

const BASE_ENV = [
	"PATH",
	"HOME",
	"USER",
	"LOGNAME",
	"LANG",
	"LC_ALL",
	"LC_CTYPE",
	"TERM",
	"TMPDIR",
	"TZ",
	"SHELL",
];

/** Per provider: the variables its CLI needs. Nothing else of the task's environment reaches it. */
export const PROVIDER_ENV: Record<ProviderName, RegExp[]> = {
	claude: [/^ANTHROPIC_/, /^CLAUDE_CODE_/, /^AWS_BEARER_TOKEN_BEDROCK$/],
	gemini: [/^GEMINI_API_KEY$/, /^GOOGLE_API_KEY$/, /^GOOGLE_GENAI_/, /^GOOGLE_CLOUD_PROJECT$/],
	opencode: [/^OPENCODE_/, /^ANTHROPIC_API_KEY$/, /^OPENAI_API_KEY$/, /^OPENROUTER_API_KEY$/],
	codex: [/^OPENAI_API_KEY$/, /^OPENAI_BASE_URL$/, /^CODEX_/],
	builtin: [],
};

export function agentEnv(provider: ProviderName, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const out: NodeJS.ProcessEnv = {};
	for (const [k, v] of Object.entries(env)) {
		if (v === undefined || k === "CLAUDECODE") continue;
		if (BASE_ENV.includes(k) || PROVIDER_ENV[provider].some((re) => re.test(k))) out[k] = v;
	}
	return out;
}
