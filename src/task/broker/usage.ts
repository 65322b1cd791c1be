import type { TokenUsage } from "../../domain/usage";
import type { ModelApi } from "./apis";

// What a model API's answer says it used, read from the answer itself as it passes the broker
// (docs/security.md › Security): the run's token counts come from here, not from what the agent's
// CLI says. Cached input is counted apart, as Lisa counts it (src/domain/usage.ts).

/** One answer's count so far: its tokens and the model that served it. */
export interface AnswerUsage {
	usage: TokenUsage;
	model?: string;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
	typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
const n = (v: unknown): number =>
	typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
const s = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** No tokens. */
export const noUsage = (): TokenUsage => ({
	inputTokens: 0,
	outputTokens: 0,
	cacheReadTokens: 0,
	cacheWriteTokens: 0,
});

/**
 * Reads one answer, streamed (Server-Sent Events) or whole (JSON): `push` its text as it arrives,
 * then `read` what it said it used. Whatever is not a usage report is passed over.
 */
export class UsageReader {
	private readonly found: AnswerUsage = { usage: noUsage() };
	private buffer = "";

	constructor(
		private readonly api: ModelApi,
		private readonly streamed: boolean,
	) {}

	push(text: string): void {
		this.buffer += text;
		if (!this.streamed) return;
		// Events end at a blank line; the rest waits for more.
		const events = this.buffer.split(/\r?\n\r?\n/);
		this.buffer = events.pop() ?? "";
		for (const e of events) this.event(e);
	}

	/** What the answer has said so far (a streamed one says its input first). */
	peek(): TokenUsage {
		return { ...this.found.usage };
	}

	read(): AnswerUsage {
		if (this.streamed) {
			if (this.buffer.trim()) this.event(this.buffer);
		} else {
			const body = parse(this.buffer);
			// Gemini's streamGenerateContent without alt=sse answers a JSON array of chunks.
			for (const chunk of Array.isArray(body) ? body : [body]) this.chunk(obj(chunk));
		}
		this.buffer = "";
		return this.found;
	}

	private event(text: string): void {
		const data = text
			.split(/\r?\n/)
			.filter((l) => l.startsWith("data:"))
			.map((l) => l.slice(5).replace(/^ /, ""))
			.join("\n");
		if (data && data !== "[DONE]") this.chunk(obj(parse(data)));
	}

	private chunk(c: Json | undefined): void {
		if (!c) return;
		const u = this.found.usage;
		switch (this.api) {
			case "anthropic": {
				// message_start carries the input (and a first output count); message_delta the
				// output so far, and, from some servers, the input again. A whole answer is the message.
				const message = obj(c.message) ?? (c.type === "message" ? c : undefined);
				const usage = obj(message?.usage) ?? obj(c.usage);
				if (message?.model) this.found.model = s(message.model);
				if (!usage) return;
				if ("input_tokens" in usage) u.inputTokens = n(usage.input_tokens);
				if ("cache_read_input_tokens" in usage)
					u.cacheReadTokens = n(usage.cache_read_input_tokens);
				if ("cache_creation_input_tokens" in usage)
					u.cacheWriteTokens = n(usage.cache_creation_input_tokens);
				if ("output_tokens" in usage) u.outputTokens = n(usage.output_tokens);
				return;
			}
			case "responses": {
				// The Responses API: the closing event (completed, incomplete or failed) holds the
				// response with its usage; a whole answer is the response.
				const response = obj(c.response) ?? (c.object === "response" ? c : undefined);
				if (response?.model) this.found.model = s(response.model);
				const usage = obj(response?.usage);
				if (usage)
					this.openai(
						n(usage.input_tokens),
						n(usage.output_tokens),
						obj(usage.input_tokens_details),
					);
				return;
			}
			case "chat": {
				if (c.model) this.found.model = s(c.model);
				const usage = obj(c.usage);
				if (usage)
					this.openai(
						n(usage.prompt_tokens),
						n(usage.completion_tokens),
						obj(usage.prompt_tokens_details),
					);
				return;
			}
			case "gemini": {
				// Each chunk holds the answer's usage so far; the last one holds it all.
				if (c.modelVersion) this.found.model = s(c.modelVersion);
				const usage = obj(c.usageMetadata);
				if (!usage) return;
				const cached = n(usage.cachedContentTokenCount);
				u.inputTokens = Math.max(0, n(usage.promptTokenCount) - cached);
				u.cacheReadTokens = cached;
				u.outputTokens = n(usage.candidatesTokenCount) + n(usage.thoughtsTokenCount);
				return;
			}
		}
	}

	/** OpenAI counts cached input within the input. */
	private openai(input: number, output: number, details: Json | undefined): void {
		const cached = Math.min(input, n(details?.cached_tokens));
		Object.assign(this.found.usage, {
			inputTokens: input - cached,
			outputTokens: output,
			cacheReadTokens: cached,
		});
	}
}

function parse(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		return undefined;
	}
}
