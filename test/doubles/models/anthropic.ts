// A local Anthropic Messages API for Claude Code: POST /v1/messages (streamed as Server-Sent Events
// or as one JSON message) and POST /v1/messages/count_tokens, with the real request and response
// shapes, the `x-api-key` check and Anthropic's error format. The test scripts the model's turns:
// tool calls the CLI really runs, a final text, or an HTTP error (429, 529, 401…).
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { TokenUsage } from "../../../src/domain/usage";
import { serveLocal } from "../serve";
import { bill, noTokens } from "./billed";

/** A tool call the model makes, by the CLI's tool name (`Bash`, `Write`…). */
interface ToolCall {
	name: string;
	input: Record<string, unknown>;
}

interface Usage {
	input_tokens: number;
	output_tokens: number;
	cache_creation_input_tokens: number;
	cache_read_input_tokens: number;
}

/** One model turn: text and/or tool calls, with the usage to report; or an HTTP error. */
export type AnthropicReply =
	| { text?: string; tools?: ToolCall[]; usage?: Partial<Usage> }
	| { status: number; type?: string; message?: string; headers?: Record<string, string> };

interface ContentBlock {
	type: string;
	text?: string;
	name?: string;
	id?: string;
	input?: unknown;
	tool_use_id?: string;
	content?: unknown;
	is_error?: boolean;
}

interface MessagesRequest {
	path: string;
	model: string;
	stream: boolean;
	/** The conversation as sent, each message's content as blocks. */
	messages: { role: string; content: ContentBlock[] }[];
	/** The tool names offered; none for the CLI's side requests (titles, quota checks). */
	tools: string[];
	system: string;
	apiKey?: string;
	headers: Record<string, string>;
}

export interface AnthropicDouble {
	/** The base URL as ANTHROPIC_BASE_URL takes it (no `/v1`). */
	readonly url: string;
	readonly apiKey: string;
	/** Every request received, in order (count_tokens included, with `path` telling them apart). */
	readonly requests: MessagesRequest[];
	/** The agent loop's requests: those offering tools. */
	readonly turns: MessagesRequest[];
	/** Queues the agent loop's replies; each request that offers tools takes the next one. */
	script(...replies: AnthropicReply[]): void;
	/** Forgets the requests and the replies not taken, for the next test. */
	reset(): void;
	/** Usage sent with every scripted turn unless the turn sets its own. */
	readonly usage: Usage;
	/** The tokens its answers reported, in Lisa's counts (cached input apart). */
	readonly billed: TokenUsage;
	stop(): Promise<void>;
}

const DEFAULT_ANTHROPIC_KEY = "sk-ant-api03-test-0123456789abcdefghijklmnopqrstuvwxyz";

const ERROR_TYPES: Record<number, string> = {
	400: "invalid_request_error",
	401: "authentication_error",
	403: "permission_error",
	404: "not_found_error",
	413: "request_too_large",
	429: "rate_limit_error",
	500: "api_error",
	529: "overloaded_error",
};

const ERROR_MESSAGES: Record<string, string> = {
	rate_limit_error:
		"This request would exceed the rate limit for your organization of 50 requests per minute.",
	overloaded_error: "Overloaded",
	authentication_error: "invalid x-api-key",
};

/** Message content as blocks (a string content is one text block). */
const blocks = (content: unknown): ContentBlock[] =>
	typeof content === "string"
		? [{ type: "text", text: content }]
		: Array.isArray(content)
			? (content as ContentBlock[])
			: [];

const systemText = (system: unknown): string =>
	blocks(system)
		.map((b) => b.text ?? "")
		.join("\n");

export async function startAnthropicDouble(
	opts: { apiKey?: string } = {},
): Promise<AnthropicDouble> {
	const apiKey = opts.apiKey ?? DEFAULT_ANTHROPIC_KEY;
	const requests: MessagesRequest[] = [];
	const turns: MessagesRequest[] = [];
	const queue: AnthropicReply[] = [];
	const billed = noTokens();
	const usage: Usage = {
		input_tokens: 1200,
		output_tokens: 80,
		cache_creation_input_tokens: 300,
		cache_read_input_tokens: 2000,
	};

	const error = (status: number, type?: string, message?: string, headers = {}) =>
		new Response(
			JSON.stringify({
				type: "error",
				error: {
					type: type ?? ERROR_TYPES[status] ?? "api_error",
					message:
						message ?? ERROR_MESSAGES[type ?? ERROR_TYPES[status] ?? ""] ?? "Internal server error",
				},
			}),
			{
				status,
				headers: {
					"content-type": "application/json",
					"request-id": `req_${randomUUID().replace(/-/g, "")}`,
					...(status === 429
						? { "retry-after": "0", "anthropic-ratelimit-requests-remaining": "0" }
						: {}),
					...headers,
				},
			},
		);

	const app = new Hono();

	app.post("/v1/messages/count_tokens", async (c) => {
		const body = await c.req.json().catch(() => undefined);
		if (c.req.header("x-api-key") !== apiKey) return error(401);
		if (!body) return error(400, undefined, "Invalid JSON body");
		return c.json({ input_tokens: Math.ceil(JSON.stringify(body.messages ?? []).length / 4) });
	});

	app.post("/v1/messages", async (c) => {
		let body: Record<string, unknown>;
		try {
			body = await c.req.json();
		} catch {
			return error(400, undefined, "There was an error parsing the body: invalid JSON");
		}
		const req: MessagesRequest = {
			path: c.req.path,
			model: String(body.model ?? ""),
			stream: body.stream === true,
			messages: (Array.isArray(body.messages) ? body.messages : []).map(
				(m: { role: string; content: unknown }) => ({ role: m.role, content: blocks(m.content) }),
			),
			tools: (Array.isArray(body.tools) ? body.tools : []).map((t: { name: string }) => t.name),
			system: systemText(body.system),
			apiKey: c.req.header("x-api-key"),
			headers: c.req.header(),
		};
		requests.push(req);
		if (req.apiKey !== apiKey) return error(401);
		if (!req.model || req.messages.length === 0 || typeof body.max_tokens !== "number")
			return error(400, undefined, "model, messages and max_tokens are required");

		// The CLI's side requests (a session title, a quota probe) offer no tools: they get a short
		// answer and never take a scripted turn.
		let reply: AnthropicReply;
		if (req.tools.length === 0)
			reply = {
				text: "Add a greeting",
				usage: {
					cache_read_input_tokens: 0,
					cache_creation_input_tokens: 0,
					input_tokens: 50,
					output_tokens: 5,
				},
			};
		else {
			turns.push(req);
			reply = queue.shift() ?? {
				status: 500,
				message: "Anthropic double: the script has no reply left",
			};
		}
		if ("status" in reply) return error(reply.status, reply.type, reply.message, reply.headers);

		const id = `msg_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
		const content: ContentBlock[] = [
			...(reply.text ? [{ type: "text", text: reply.text }] : []),
			...(reply.tools ?? []).map((t) => ({
				type: "tool_use",
				id: `toolu_${randomUUID().replace(/-/g, "").slice(0, 24)}`,
				name: t.name,
				input: t.input,
			})),
		];
		const u: Usage = { ...usage, ...reply.usage };
		bill(billed, {
			inputTokens: u.input_tokens,
			outputTokens: u.output_tokens,
			cacheReadTokens: u.cache_read_input_tokens,
			cacheWriteTokens: u.cache_creation_input_tokens,
		});
		const stopReason = reply.tools?.length ? "tool_use" : "end_turn";
		const headers = { "request-id": `req_${randomUUID().replace(/-/g, "")}` };

		if (!req.stream)
			return c.json(
				{
					id,
					type: "message",
					role: "assistant",
					model: req.model,
					content,
					stop_reason: stopReason,
					stop_sequence: null,
					usage: u,
				},
				200,
				headers,
			);

		for (const [k, v] of Object.entries(headers)) c.header(k, v);
		return streamSSE(c, async (s) => {
			const send = (data: Record<string, unknown>) =>
				s.writeSSE({ event: String(data.type), data: JSON.stringify(data) });
			await send({
				type: "message_start",
				message: {
					id,
					type: "message",
					role: "assistant",
					model: req.model,
					content: [],
					stop_reason: null,
					stop_sequence: null,
					usage: { ...u, output_tokens: 1 },
				},
			});
			await send({ type: "ping" });
			for (const [index, block] of content.entries()) {
				if (block.type === "text") {
					await send({
						type: "content_block_start",
						index,
						content_block: { type: "text", text: "" },
					});
					// Two deltas, as a real stream splits text.
					const text = block.text ?? "";
					const half = Math.ceil(text.length / 2);
					for (const part of [text.slice(0, half), text.slice(half)])
						if (part)
							await send({
								type: "content_block_delta",
								index,
								delta: { type: "text_delta", text: part },
							});
				} else {
					await send({
						type: "content_block_start",
						index,
						content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
					});
					const json = JSON.stringify(block.input);
					const half = Math.ceil(json.length / 2);
					for (const part of [json.slice(0, half), json.slice(half)])
						await send({
							type: "content_block_delta",
							index,
							delta: { type: "input_json_delta", partial_json: part },
						});
				}
				await send({ type: "content_block_stop", index });
			}
			await send({
				type: "message_delta",
				delta: { stop_reason: stopReason, stop_sequence: null },
				usage: { output_tokens: u.output_tokens },
			});
			await send({ type: "message_stop" });
		});
	});

	app.all("*", (c) => {
		requests.push({
			path: `${c.req.method} ${c.req.path}`,
			model: "",
			stream: false,
			messages: [],
			tools: [],
			system: "",
			apiKey: c.req.header("x-api-key"),
			headers: c.req.header(),
		});
		return error(404, undefined, `Not found: ${c.req.path}`);
	});

	const { port, stop } = await serveLocal(app);
	return {
		url: `http://127.0.0.1:${port}`,
		apiKey,
		requests,
		turns,
		usage,
		billed,
		script: (...replies) => {
			queue.push(...replies);
		},
		reset: () => {
			for (const list of [requests, turns, queue]) list.length = 0;
		},
		stop,
	};
}
