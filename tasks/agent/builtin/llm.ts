import { isTransientStatus } from "../../../shared/domain/transient";

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

const MAX_RETRY_AFTER_MS = 10_000;

async function once(cfg: LlmConfig, messages: ChatMessage[]): Promise<string> {
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
			body: JSON.stringify({ model: cfg.model, messages, temperature: 0 }),
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
		try {
			detail = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? detail;
		} catch {}
		const retryAfter = Number(res.headers.get("retry-after"));
		throw new LlmError(
			`HTTP ${res.status} ${res.statusText}: ${detail}`,
			isTransientStatus(res.status),
			res.status,
			Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
		);
	}
	let content: unknown;
	try {
		content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]
			?.message?.content;
	} catch {}
	if (typeof content !== "string")
		throw new LlmError("the LLM endpoint answered without choices[0].message.content", false);
	return content;
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

/** The assistant's reply; throws LlmError once the retries of a transient failure are spent. */
export async function chat(cfg: LlmConfig, messages: ChatMessage[]): Promise<string> {
	for (let attempt = 0; ; attempt++) {
		try {
			return await once(cfg, messages);
		} catch (err) {
			const delay = cfg.retryDelaysMs[attempt];
			if (
				!(err instanceof LlmError) ||
				!err.transient ||
				delay === undefined ||
				cfg.signal?.aborted
			)
				throw err;
			await sleep(Math.min(MAX_RETRY_AFTER_MS, Math.max(delay, err.retryAfterMs ?? 0)), cfg.signal);
		}
	}
}
