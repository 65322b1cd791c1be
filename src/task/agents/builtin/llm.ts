import { isTransientFailure, isTransientStatus } from "../../../domain/transient";
import type { AgentUsage } from "../provider";

// A minimal OpenAI-compatible chat client (POST {base}/chat/completions) on fetch, with a timeout
// per request and a short retry of transient answers. A failure says whether it is transient, so
// the fallback chain can try the next model on 429/5xx.

export interface ChatMessage {
	role: "system" | "user" | "assistant";
	content: string;
}

export interface LlmConfig {
	baseUrl: string;
	apiKey?: string;
	model: string;
	/** Sent only when set: reasoning models refuse any value but their default. */
	temperature?: number;
	timeoutMs: number;
	/** Delays before each retry of a transient failure. */
	retryDelaysMs: readonly number[];
	signal?: AbortSignal;
}

export class LlmError extends Error {
	constructor(
		message: string,
		readonly transient: boolean,
		readonly status?: number,
		readonly retryAfterMs?: number,
	) {
		super(message);
		this.name = "LlmError";
	}
}

/** The reply: its text, whether the output limit cut it, and the tokens it cost. */
export interface ChatReply {
	content: string;
	cut: boolean;
	usage?: AgentUsage;
}

/** A wait the endpoint asks for beyond this is not waited out here: the next model goes on. */
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * How long the endpoint asks to wait: OpenAI's `retry-after-ms`, or `Retry-After` in seconds or as
 * an HTTP date (RFC 9110).
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
	const ms = headers.get("retry-after-ms");
	if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
	const after = headers.get("retry-after")?.trim();
	if (!after) return undefined;
	if (/^\d+$/.test(after)) return Number(after) * 1000;
	const at = Date.parse(after);
	return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

interface ChatAnswer {
	choices?: { message?: { content?: unknown }; finish_reason?: unknown }[];
	usage?: {
		prompt_tokens?: number;
		completion_tokens?: number;
		prompt_tokens_details?: { cached_tokens?: number };
	};
}

function usageOf(answer: ChatAnswer): AgentUsage | undefined {
	const u = answer.usage;
	if (!u) return undefined;
	const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
	return {
		// OpenAI counts cached input within prompt_tokens; here it is counted once, as cache reads.
		inputTokens: Math.max(0, (u.prompt_tokens ?? 0) - cached),
		outputTokens: u.completion_tokens ?? 0,
		cacheReadTokens: cached,
		cacheWriteTokens: 0,
	};
}

async function once(cfg: LlmConfig, messages: ChatMessage[]): Promise<ChatReply> {
	const url = `${cfg.baseUrl.replace(/\/+$/, "")}/chat/completions`;
	const signals = [AbortSignal.timeout(cfg.timeoutMs), ...(cfg.signal ? [cfg.signal] : [])];
	let res: Response;
	try {
		res = await fetch(url, {
			method: "POST",
			headers: {
				"content-type": "application/json",
				...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}),
			},
			body: JSON.stringify({ model: cfg.model, messages, temperature: cfg.temperature }),
			signal: AbortSignal.any(signals),
		});
	} catch (err) {
		if (cfg.signal?.aborted) throw new LlmError("the request was cancelled", false);
		const e = err as Error & { cause?: { code?: string; message?: string } };
		if (e.name === "TimeoutError")
			throw new LlmError(`the LLM request timed out after ${cfg.timeoutMs / 1000} s`, true);
		throw new LlmError(
			`network error calling the LLM endpoint: ${e.cause?.code ?? e.cause?.message ?? e.message}`,
			true,
		);
	}
	const text = await res.text().catch(() => "");
	if (!res.ok) {
		let detail = text.slice(0, 300);
		let code: unknown;
		try {
			const error = (JSON.parse(text) as { error?: { message?: string; code?: unknown } }).error;
			detail = error?.message ?? detail;
			code = error?.code;
		} catch {}
		// An unknown model is worth the next one, as the fallback rules say
		// (docs/agent-task.md › Providers and models), whatever status the endpoint gives it.
		const transient =
			isTransientStatus(res.status) || code === "model_not_found" || isTransientFailure(detail);
		throw new LlmError(
			`HTTP ${res.status} ${res.statusText}: ${detail}`,
			transient,
			res.status,
			retryAfterMs(res.headers),
		);
	}
	let answer: ChatAnswer = {};
	try {
		answer = JSON.parse(text) as ChatAnswer;
	} catch {}
	const choice = answer.choices?.[0];
	const content = choice?.message?.content;
	if (typeof content !== "string")
		throw new LlmError("the LLM endpoint answered without choices[0].message.content", false);
	return { content, cut: choice?.finish_reason === "length", usage: usageOf(answer) };
}

const sleep = (ms: number, signal?: AbortSignal) =>
	new Promise<void>((resolve) => {
		const t = setTimeout(resolve, ms);
		signal?.addEventListener(
			"abort",
			() => {
				clearTimeout(t);
				resolve();
			},
			{ once: true },
		);
	});

/**
 * The assistant's reply; throws LlmError once the retries of a transient failure are spent, or at
 * once when the endpoint asks for a longer wait than is worth it here.
 */
export async function chat(cfg: LlmConfig, messages: ChatMessage[]): Promise<ChatReply> {
	for (let attempt = 0; ; attempt++) {
		try {
			return await once(cfg, messages);
		} catch (err) {
			const delay = cfg.retryDelaysMs[attempt];
			if (
				!(err instanceof LlmError) ||
				!err.transient ||
				// Another request to a model that does not exist fails the same way.
				(err.status !== undefined && !isTransientStatus(err.status)) ||
				delay === undefined ||
				cfg.signal?.aborted ||
				(err.retryAfterMs ?? 0) > MAX_RETRY_AFTER_MS
			)
				throw err;
			await sleep(Math.max(delay, err.retryAfterMs ?? 0), cfg.signal);
		}
	}
}
