import { PROVIDER_ENV } from "../../config/provider-env";
import type { ProviderName } from "../../config/schema";
import type { TokenUsage } from "../../domain/usage";
import { AGENT_MARK } from "../sandbox/identity";
import type { AgentUser } from "../sandbox/process";

export interface AgentRunOptions {
	cwd: string;
	model?: string;
	/** The environment the agent gets: already reduced to what it needs (`agentEnv`). */
	env: NodeJS.ProcessEnv;
	timeoutMs: number;
	onOutput?: (chunk: string) => void;
	/** Aborting kills the agent and everything it started. */
	signal?: AbortSignal;
	/** Claude Code's own worktree (`--worktree <name>`), created from the cwd's HEAD. */
	nativeWorktree?: string;
	/** A directory outside the worktree for files the agent reads but must not commit. */
	scratchDir: string;
	/** The agent's own user, when the task has one (docs/agent-task.md › The container). */
	user?: AgentUser;
	/**
	 * Called when the usage so far grows, where the CLI streams it while it runs (the budget's live
	 * watch, docs/cost.md › Cost and budgets); where it reports usage only at the end, never.
	 */
	onUsage?: (live: LiveUsage) => void;
}

/** Tokens an agent run used, as its CLI (or the endpoint) reported them; the cost where reported. */
export type AgentUsage = TokenUsage;

/** A running agent's usage so far. */
export interface LiveUsage {
	usage: AgentUsage;
	/** The model the CLI says it serves, when it says. */
	servedModel?: string;
	/** This update is the CLI's closing summary: the run asks the model for nothing more. */
	final?: boolean;
}

/**
 * Why a run failed, from the CLI's own structured error (never from matching its text): rate
 * limited, overloaded, out of quota, an unknown model and a network failure are worth the next
 * model; authentication and a refused request are not.
 */
export type AgentErrorKind =
	| "rate_limit"
	| "overloaded"
	| "quota"
	| "model_not_found"
	| "network"
	| "auth"
	| "invalid_request"
	| "other";

export const TRANSIENT_ERROR_KINDS: readonly AgentErrorKind[] = [
	"rate_limit",
	"overloaded",
	"quota",
	"model_not_found",
	"network",
];

/** What an agent run said about itself in its machine-readable output. */
export interface AgentReport {
	/** The agent's last message. */
	finalMessage?: string;
	/** Model turns (requests to the model). */
	turns?: number;
	usage?: AgentUsage;
	/** The model the CLI said it served (what prices a `models` entry without a model name). */
	servedModel?: string;
	error?: { kind: AgentErrorKind; message: string };
}

export interface AgentResult {
	ok: boolean;
	output: string;
	exitCode: number | null;
	/** The signal that ended it, when one did. */
	signal?: NodeJS.Signals | null;
	timedOut: boolean;
	/** The provider's own verdict on a failure, when it knows better than the output patterns. */
	transient?: boolean;
	/** What the run reported about itself, when its CLI has a machine-readable mode. */
	report?: AgentReport;
}

export interface Provider {
	readonly name: ProviderName;
	/**
	 * Claude Code can create and manage its own worktree (docs/agent-task.md › Providers and models).
	 */
	readonly supportsNativeWorktree?: boolean;
	/** Why it cannot run here (not installed, not executable by the agent's uid); undefined: it can. */
	unavailable(
		env: NodeJS.ProcessEnv,
		model?: string,
		user?: AgentUser,
	): Promise<string | undefined>;
	run(prompt: string, opts: AgentRunOptions): Promise<AgentResult>;
}

/**
 * The longest prompt given on stdin, well under what each CLI reads of it (Gemini CLI cuts its
 * stdin at 8 MiB). A longer one (only a description near the store's 400 KB item limit makes one)
 * goes in a file the agent is told to read, never cut.
 */
export const MAX_PROMPT_STDIN_BYTES = 200_000;

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
	// The way out where there is one (the egress proxy, docs/security.md › Security).
	"HTTP_PROXY",
	"HTTPS_PROXY",
	"NO_PROXY",
	"http_proxy",
	"https_proxy",
	"no_proxy",
	"NODE_USE_ENV_PROXY",
	// Not a secret: how the attempt finds its agent's processes without an agent user.
	AGENT_MARK,
];

/**
 * The environment of anything Lisa runs in the worktree (agents, setup and validate commands): the
 * basics, a git identity for commits, and no terminal prompts. Never Lisa's own credentials.
 */
export function commandEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const out: NodeJS.ProcessEnv = {};
	for (const k of BASE_ENV) if (env[k] !== undefined) out[k] = env[k];
	out.GIT_AUTHOR_NAME = env.GIT_AUTHOR_NAME ?? "Lisa";
	out.GIT_AUTHOR_EMAIL = env.GIT_AUTHOR_EMAIL ?? "lisa@users.noreply.github.com";
	out.GIT_COMMITTER_NAME = env.GIT_COMMITTER_NAME ?? out.GIT_AUTHOR_NAME;
	out.GIT_COMMITTER_EMAIL = env.GIT_COMMITTER_EMAIL ?? out.GIT_AUTHOR_EMAIL;
	out.GIT_TERMINAL_PROMPT = "0";
	return out;
}

/** `commandEnv` plus the provider's own variables; `CLAUDECODE` never passes (nested sessions). */
export function agentEnv(provider: ProviderName, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const out = commandEnv(env);
	for (const [k, v] of Object.entries(env)) {
		if (v === undefined || k === "CLAUDECODE") continue;
		if (PROVIDER_ENV[provider].some((re) => re.test(k))) out[k] = v;
	}
	return out;
}
