// A local OpenAI-compatible chat endpoint for the built-in agent: POST /v1/chat/completions with the
// real request and response shapes, answering from a script. A reply can be the assistant's text or
// an HTTP failure in OpenAI's error format (429 with retry-after, 5xx), so retries and the fallback
// chain meet what a real endpoint sends.
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

/** An answer with more than its text: a reply cut at the output limit, or given usage numbers. */
export interface LlmText {
	text: string;
	finishReason?: "stop" | "length";
	usage?: { prompt: number; completion: number; cached?: number };
}

export type LlmReply =
	| string
	| LlmText
	| {
			status: number;
			message?: string;
			code?: string;
			param?: string;
			headers?: Record<string, string>;
	  };

export interface ChatRequest {
	model: string;
	messages: { role: string; content: string }[];
	temperature?: number;
	/** Whether the request carried the double's API key. */
	authorized: boolean;
}

export interface LlmDouble {
	/** The base URL, `…/v1`, as LISA_LLM_BASE_URL takes it. */
	readonly url: string;
	readonly apiKey: string;
	/** Every chat request received, in order. */
	readonly requests: ChatRequest[];
	/** Queues replies; each request takes the next one. */
	script(...replies: LlmReply[]): void;
	/** Answers requests when the script is empty (by default: a 500 saying the script ran out). */
	otherwise(reply: (req: ChatRequest) => LlmReply): void;
	stop(): Promise<void>;
}

export const DEFAULT_LLM_KEY = "sk-test-llm-0123456789abcdefghijklmn";

const ERROR_TYPES: Record<number, string> = {
	400: "invalid_request_error",
	401: "invalid_request_error",
	404: "invalid_request_error",
	429: "requests",
	500: "server_error",
	502: "server_error",
	503: "server_error",
};

/**
 * `reasoning`: the model refuses a `temperature` other than its default, as OpenAI's reasoning
 * models do (400 `unsupported_value`).
 */
export async function startLlmDouble(
	opts: { apiKey?: string; reasoning?: boolean } = {},
): Promise<LlmDouble> {
	const apiKey = opts.apiKey ?? DEFAULT_LLM_KEY;
	const requests: ChatRequest[] = [];
	const queue: LlmReply[] = [];
	let fallback: (req: ChatRequest) => LlmReply = () => ({
		status: 500,
		message: "LLM double: the script has no reply left",
	});
	let n = 0;

	const error = (
		status: number,
		message: string,
		code: string | null,
		headers = {},
		param: string | null = null,
	) =>
		new Response(
			JSON.stringify({
				error: { message, type: ERROR_TYPES[status] ?? "server_error", param, code },
			}),
			{ status, headers: { "content-type": "application/json", ...headers } },
		);

	const app = new Hono();
	app.post("/v1/chat/completions", async (c) => {
		let body: Partial<ChatRequest>;
		try {
			body = await c.req.json();
		} catch {
			return error(400, "We could not parse the JSON body of your request.", null);
		}
		const authorized = c.req.header("authorization") === `Bearer ${apiKey}`;
		const valid =
			typeof body.model === "string" &&
			Array.isArray(body.messages) &&
			body.messages.every(
				(m) => typeof m?.content === "string" && ["system", "user", "assistant"].includes(m?.role),
			);
		if (!valid) return error(400, "Invalid request: 'model' and 'messages' are required.", null);
		const req: ChatRequest = {
			model: body.model as string,
			messages: body.messages as ChatRequest["messages"],
			temperature: body.temperature,
			authorized,
		};
		requests.push(req);
		if (!authorized)
			return error(401, "Incorrect API key provided.", "invalid_api_key", {
				"www-authenticate": 'Bearer realm="OpenAI API"',
			});
		if (opts.reasoning && req.temperature !== undefined && req.temperature !== 1)
			return error(
				400,
				`Unsupported value: 'temperature' does not support ${req.temperature} with this model. Only the default (1) value is supported.`,
				"unsupported_value",
				{},
				"temperature",
			);
		const next = queue.shift() ?? fallback(req);
		const reply: LlmText | Exclude<LlmReply, string> =
			typeof next === "string" ? { text: next } : next;
		if (!("text" in reply))
			return error(
				reply.status,
				reply.message ??
					(reply.status === 429
						? `Rate limit reached for ${req.model}. Please try again in 1s.`
						: "The server had an error while processing your request."),
				reply.code ?? (reply.status === 429 ? "rate_limit_exceeded" : null),
				{
					...(reply.status === 429
						? { "retry-after": "1", "x-ratelimit-remaining-requests": "0" }
						: {}),
					...reply.headers,
				},
				reply.param ?? null,
			);
		n++;
		const promptTokens = reply.usage?.prompt ?? Math.ceil(JSON.stringify(req.messages).length / 4);
		const completionTokens = reply.usage?.completion ?? Math.ceil(reply.text.length / 4);
		return c.json({
			id: `chatcmpl-double${n}`,
			object: "chat.completion",
			created: Math.floor(Date.now() / 1000),
			model: req.model,
			choices: [
				{
					index: 0,
					message: { role: "assistant", content: reply.text, refusal: null },
					logprobs: null,
					finish_reason: reply.finishReason ?? "stop",
				},
			],
			usage: {
				prompt_tokens: promptTokens,
				completion_tokens: completionTokens,
				total_tokens: promptTokens + completionTokens,
				prompt_tokens_details: { cached_tokens: reply.usage?.cached ?? 0 },
			},
			system_fingerprint: null,
		});
	});

	const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>(
		(resolve, reject) => {
			const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
				resolve({ server, port: (info as AddressInfo).port }),
			);
			server.once("error", reject);
		},
	);
	return {
		url: `http://127.0.0.1:${port}/v1`,
		apiKey,
		requests,
		script: (...replies) => {
			queue.push(...replies);
		},
		otherwise: (reply) => {
			fallback = reply;
		},
		stop: () =>
			new Promise<void>((resolve, reject) => {
				server.close((err) => (err ? reject(err) : resolve()));
				if ("closeAllConnections" in server) server.closeAllConnections();
			}),
	};
}

/** A well-formed reply of the built-in agent's protocol: a THOUGHT and one bash block. */
export function bashReply(thought: string, command: string): string {
	return `THOUGHT: ${thought}\n\n\`\`\`bash\n${command}\n\`\`\``;
}
