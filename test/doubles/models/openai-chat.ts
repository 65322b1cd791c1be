// A local OpenAI-compatible Chat Completions API: POST /v1/chat/completions answered as Server-Sent
// Events (`chat.completion.chunk`, with a usage chunk when `stream_options.include_usage` asks for
// it, then `[DONE]`) or as one JSON `chat.completion`, with the bearer-key check and OpenAI's error
// format. It serves both opencode and Lisa's built-in agent. The test scripts the model's turns: text,
// tool calls (any tool name, any arguments) the client really runs, or an HTTP error (429 with
// retry-after, 5xx, 401…), so retries and the fallback chain meet what a real endpoint sends.
import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { TokenUsage } from "../../../src/domain/usage";
import { serveLocal } from "../serve";
import { bill, noTokens } from "./billed";

/** A function call the model makes, by the client's tool name. */
interface ToolCall {
	name: string;
	arguments: Record<string, unknown>;
}

export interface Usage {
	prompt_tokens: number;
	completion_tokens: number;
	/** Part of `prompt_tokens` served from the prompt cache. */
	cached_tokens: number;
}

/** An HTTP failure in OpenAI's error format; unset fields take what OpenAI sends for the status. */
interface ChatFailure {
	status: number;
	message?: string;
	type?: string;
	code?: string | null;
	param?: string;
	headers?: Record<string, string>;
}

/**
 * One model turn: its text (a string alone is just that), tool calls, the usage to report and why it
 * ended (`length`: cut at the output limit); or an HTTP error.
 */
type ChatReply =
	| string
	| {
			text?: string;
			tools?: ToolCall[];
			usage?: Partial<Usage>;
			finishReason?: "stop" | "length" | "tool_calls";
	  }
	| ChatFailure;

/** A scripted reply, or one made from the request (e.g. a tool call on a path the prompt names). */
type ScriptedReply = ChatReply | ((req: ChatRequest) => ChatReply);

/** A message as the client sent it (`content` a string or parts; `tool_calls` on the assistant's). */
interface ChatMessage {
	role: string;
	content?: unknown;
	tool_call_id?: string;
	tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
}

export interface ChatRequest {
	model: string;
	stream: boolean;
	/** Whether the client asked for the usage chunk (`stream_options.include_usage`). */
	includeUsage: boolean;
	messages: ChatMessage[];
	/** The function names offered; none for the built-in agent or a client's side requests. */
	tools: string[];
	temperature?: number;
	authorized: boolean;
	headers: Record<string, string>;
}

export interface OpenAiChatDouble {
	/** The base URL, `…/v1`, as OpenAI-compatible clients (and LISA_LLM_BASE_URL) take it. */
	readonly url: string;
	readonly apiKey: string;
	/** Every chat request received, in order. */
	readonly requests: ChatRequest[];
	/** The agent loop's requests: those answered from the script. */
	readonly turns: ChatRequest[];
	/** Queues the agent loop's replies; each request takes the next one (see `side`). */
	script(...replies: ScriptedReply[]): void;
	/** Answers the agent loop when the script is empty (by default: a 500 saying it ran out). */
	otherwise(reply: (req: ChatRequest) => ChatReply): void;
	/**
	 * Answers requests without tools (a client's titles, summaries) apart from the script. Until it is
	 * set, every request takes the script, as the built-in agent offers no tools.
	 */
	side(reply: (req: ChatRequest) => ChatReply): void;
	/** Usage sent with every scripted turn unless the turn sets its own. */
	readonly usage: Usage;
	/** The tokens its answers reported, in Lisa's counts (cached input apart). */
	readonly billed: TokenUsage;
	stop(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
	400: "invalid_request_error",
	401: "invalid_request_error",
	403: "permission_error",
	404: "invalid_request_error",
	429: "requests",
};

const ERROR_CODES: Record<number, string> = {
	401: "invalid_api_key",
	404: "model_not_found",
	429: "rate_limit_exceeded",
};

const defaultMessage = (status: number, model: string): string =>
	({
		401: "Incorrect API key provided.",
		404: "The model does not exist or you do not have access to it.",
		429: `Rate limit reached for ${model}. Please try again in 1s.`,
		503: "The engine is currently overloaded, please try again later.",
	})[status] ?? "The server had an error while processing your request.";

const ROLES = ["system", "developer", "user", "assistant", "tool"];

/** A message OpenAI accepts: a known role, and content as text or parts (optional on the assistant's). */
const validMessage = (m: unknown): boolean => {
	if (!m || typeof m !== "object") return false;
	const { role, content } = m as ChatMessage;
	if (typeof role !== "string" || !ROLES.includes(role)) return false;
	if (typeof content === "string" || Array.isArray(content)) return true;
	return role === "assistant" && content == null;
};

/** The text of every tool result the client sent back (role `tool`), in order. */
export const toolResults = (req: ChatRequest): string[] =>
	req.messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));

/** A message's content as plain text, whether a string or an array of text parts. */
export function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : ""))
		.join("");
}

/** A well-formed reply of the built-in agent's protocol: a THOUGHT and one bash block. */
export function bashReply(thought: string, command: string): string {
	return `THOUGHT: ${thought}\n\n\`\`\`bash\n${command}\n\`\`\``;
}

/**
 * `reasoning`: the model refuses a `temperature` other than its default, as OpenAI's reasoning
 * models do (400 `unsupported_value`).
 */
export async function startOpenAiChatDouble(
	opts: { apiKey?: string; usage?: Partial<Usage>; reasoning?: boolean } = {},
): Promise<OpenAiChatDouble> {
	// A key of its own by default: a task another test left running, or a request retried after
	// its double stopped and another took the port, is refused and uses up none of this script.
	const apiKey = opts.apiKey ?? `sk-test-chat-${randomBytes(16).toString("hex")}`;
	const usage: Usage = {
		prompt_tokens: 1200,
		completion_tokens: 80,
		cached_tokens: 0,
		...opts.usage,
	};
	const requests: ChatRequest[] = [];
	const turns: ChatRequest[] = [];
	const queue: ScriptedReply[] = [];
	const billed = noTokens();
	let fallback: (req: ChatRequest) => ChatReply = () => ({
		status: 500,
		message: "Chat double: the script has no reply left",
	});
	let side: ((req: ChatRequest) => ChatReply) | undefined;
	let n = 0;

	const error = (reply: ChatFailure, model = "") => {
		const { status } = reply;
		return new Response(
			JSON.stringify({
				error: {
					message: reply.message ?? defaultMessage(status, model),
					type: reply.type ?? ERROR_TYPES[status] ?? "server_error",
					param: reply.param ?? null,
					code: reply.code === undefined ? (ERROR_CODES[status] ?? null) : reply.code,
				},
			}),
			{
				status,
				headers: {
					"content-type": "application/json",
					...(status === 401 ? { "www-authenticate": 'Bearer realm="OpenAI API"' } : {}),
					...(status === 429 ? { "retry-after": "1", "x-ratelimit-remaining-requests": "0" } : {}),
					...reply.headers,
				},
			},
		);
	};

	const app = new Hono();
	app.post("/v1/chat/completions", async (c) => {
		let body: Record<string, unknown>;
		try {
			body = await c.req.json();
		} catch {
			return error({ status: 400, message: "We could not parse the JSON body of your request." });
		}
		if (
			typeof body.model !== "string" ||
			!Array.isArray(body.messages) ||
			!body.messages.every(validMessage)
		)
			return error({
				status: 400,
				message:
					"Invalid request: 'model' and 'messages' (each with a role and content) are required.",
			});
		const tools = Array.isArray(body.tools)
			? (body.tools as { function?: { name?: string } }[])
			: [];
		const req: ChatRequest = {
			model: body.model,
			stream: body.stream === true,
			includeUsage:
				(body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
			messages: body.messages as ChatMessage[],
			tools: tools.map((t) => t.function?.name ?? ""),
			temperature: typeof body.temperature === "number" ? body.temperature : undefined,
			authorized: c.req.header("authorization") === `Bearer ${apiKey}`,
			headers: c.req.header(),
		};
		requests.push(req);
		if (!req.authorized) return error({ status: 401 });
		if (opts.reasoning && req.temperature !== undefined && req.temperature !== 1)
			return error({
				status: 400,
				message: `Unsupported value: 'temperature' does not support ${req.temperature} with this model. Only the default (1) value is supported.`,
				code: "unsupported_value",
				param: "temperature",
			});
		let next: ScriptedReply;
		if (side && req.tools.length === 0) next = side;
		else {
			turns.push(req);
			next = queue.shift() ?? fallback;
		}
		const picked = typeof next === "function" ? next(req) : next;
		const reply = typeof picked === "string" ? { text: picked } : picked;
		if ("status" in reply) return error(reply, req.model);

		n++;
		const id = `chatcmpl-double${n}`;
		const created = Math.floor(Date.now() / 1000);
		const calls = (reply.tools ?? []).map((t, i) => ({
			id: `call_double${n}_${i}`,
			type: "function" as const,
			function: { name: t.name, arguments: JSON.stringify(t.arguments) },
		}));
		const finish = reply.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop");
		const u = { ...usage, ...reply.usage };
		// Streamed, the usage is sent only when asked for.
		if (!req.stream || req.includeUsage)
			bill(billed, {
				inputTokens: u.prompt_tokens - u.cached_tokens,
				outputTokens: u.completion_tokens,
				cacheReadTokens: u.cached_tokens,
			});
		const usageJson = {
			prompt_tokens: u.prompt_tokens,
			completion_tokens: u.completion_tokens,
			total_tokens: u.prompt_tokens + u.completion_tokens,
			prompt_tokens_details: { cached_tokens: u.cached_tokens, audio_tokens: 0 },
			completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
		};

		if (!req.stream)
			return c.json({
				id,
				object: "chat.completion",
				created,
				model: req.model,
				choices: [
					{
						index: 0,
						message: {
							role: "assistant",
							content: reply.text ?? null,
							...(calls.length > 0 ? { tool_calls: calls } : {}),
							refusal: null,
						},
						logprobs: null,
						finish_reason: finish,
					},
				],
				usage: usageJson,
				system_fingerprint: null,
			});

		const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
			JSON.stringify({
				id,
				object: "chat.completion.chunk",
				created,
				model: req.model,
				system_fingerprint: null,
				choices,
				...extra,
			});
		const delta = (d: Record<string, unknown>, finishReason: string | null = null) =>
			chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finishReason }]);
		return streamSSE(c, async (sse) => {
			await sse.writeSSE({ data: delta({ role: "assistant", content: "", refusal: null }) });
			// The text in a few pieces, as a model streams it.
			const text = reply.text ?? "";
			for (let i = 0; i < text.length; i += 24)
				await sse.writeSSE({ data: delta({ content: text.slice(i, i + 24) }) });
			for (const [index, call] of calls.entries()) {
				await sse.writeSSE({
					data: delta({
						tool_calls: [
							{
								index,
								id: call.id,
								type: "function",
								function: { name: call.function.name, arguments: "" },
							},
						],
					}),
				});
				const args = call.function.arguments;
				for (let i = 0; i < args.length; i += 40)
					await sse.writeSSE({
						data: delta({
							tool_calls: [{ index, function: { arguments: args.slice(i, i + 40) } }],
						}),
					});
			}
			await sse.writeSSE({ data: delta({}, finish) });
			if (req.includeUsage) await sse.writeSSE({ data: chunk([], { usage: usageJson }) });
			await sse.writeSSE({ data: "[DONE]" });
		});
	});

	const { port, stop } = await serveLocal(app);
	return {
		url: `http://127.0.0.1:${port}/v1`,
		apiKey,
		requests,
		turns,
		usage,
		billed,
		script: (...replies) => {
			queue.push(...replies);
		},
		otherwise: (reply) => {
			fallback = reply;
		},
		side: (reply) => {
			side = reply;
		},
		stop,
	};
}
