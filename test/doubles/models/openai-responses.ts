// A local OpenAI Responses API for the Codex CLI: POST /v1/responses answered as a server-sent event
// stream (response.created, response.output_item.added/done, response.output_text.delta,
// response.completed with usage), from a script of model turns. A turn is the assistant's text,
// tool calls (Codex's `exec_command` runs a shell command, its `apply_patch` edits files), an HTTP
// failure in OpenAI's error format (429, 503 overloaded, 401…) or a `response.failed` event.
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { TokenUsage } from "../../../src/domain/usage";
import { serveLocal } from "../serve";
import { bill, noTokens } from "./billed";

/** Token counts one response reports (`usage` of response.completed). */
export interface ResponsesUsage {
	input: number;
	cached: number;
	output: number;
}

/**
 * A tool call: a function's arguments object (the wire carries it as a JSON string), or a freeform
 * (custom) tool's raw input, as Codex's `apply_patch` takes a patch.
 */
export type ToolCall =
	| { name: string; arguments: Record<string, unknown> }
	| { name: string; input: string };

export type ResponsesTurn =
	| { text: string; usage?: ResponsesUsage }
	| { calls: ToolCall[]; text?: string; usage?: ResponsesUsage }
	| {
			status: number;
			code?: string;
			type?: string;
			message?: string;
			headers?: Record<string, string>;
	  }
	| { failed: { code: string; message: string } };

/** A call of Codex's shell tool. */
export const shell = (cmd: string): ToolCall => ({
	name: "exec_command",
	arguments: { cmd, login: false, yield_time_ms: 10_000 },
});

/** A call of Codex's freeform patch tool (`*** Begin Patch` … `*** End Patch`). */
export const applyPatch = (patch: string): ToolCall => ({ name: "apply_patch", input: patch });

/** One input item of a request (messages, function_call, function_call_output…). */
type InputItem = { type?: string; role?: string; [k: string]: unknown };

export interface ResponsesRequest {
	model: string;
	input: InputItem[];
	tools: string[];
	stream: boolean;
	headers: Record<string, string>;
	/** Whether the request carried the double's API key as a bearer token. */
	authorized: boolean;
}

export interface ResponsesDouble {
	/** The base URL, `…/v1`, as OPENAI_BASE_URL takes it. */
	readonly url: string;
	readonly apiKey: string;
	/** Every POST /v1/responses received, in order. */
	readonly requests: ResponsesRequest[];
	/** Requests to any other path, as `METHOD /path`. */
	readonly unexpected: string[];
	/** Queues turns; each request takes the next one. */
	script(...turns: ResponsesTurn[]): void;
	/** The tokens its answers reported, in Lisa's counts (cached input apart). */
	readonly billed: TokenUsage;
	stop(): Promise<void>;
}

const DEFAULT_OPENAI_KEY = "sk-test-codex-0123456789abcdefghijklmn";

/** What a scripted turn reports when it names no usage: fixed, so tests can sum them. */
export const DEFAULT_USAGE: ResponsesUsage = { input: 1200, cached: 300, output: 40 };

const ERROR_TYPES: Record<number, string> = {
	400: "invalid_request_error",
	401: "invalid_request_error",
	404: "invalid_request_error",
	429: "requests",
	500: "server_error",
	503: "server_error",
};

/** The text of every `input_text` part of the request's user messages. */
export const userTexts = (req: ResponsesRequest): string[] =>
	req.input
		.filter((i) => i.type === "message" && i.role === "user")
		.flatMap((i) => (i.content as { type: string; text?: string }[]) ?? [])
		.filter((c) => c.type === "input_text")
		.map((c) => c.text ?? "");

/** The outputs of the tool calls the request sends back, by call id. */
export const toolOutputs = (req: ResponsesRequest): Map<string, string> =>
	new Map(
		req.input
			.filter((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output")
			.map((i) => [
				String(i.call_id),
				typeof i.output === "string" ? i.output : JSON.stringify(i.output),
			]),
	);

export async function startResponsesDouble(
	opts: { apiKey?: string } = {},
): Promise<ResponsesDouble> {
	const apiKey = opts.apiKey ?? DEFAULT_OPENAI_KEY;
	const requests: ResponsesRequest[] = [];
	const unexpected: string[] = [];
	const queue: ResponsesTurn[] = [];
	let calls = 0;
	const billed = noTokens();

	const error = (
		status: number,
		message: string,
		type: string,
		code: string | null,
		headers = {},
	) =>
		new Response(JSON.stringify({ error: { message, type, param: null, code } }), {
			status,
			headers: {
				"content-type": "application/json",
				"x-request-id": `req_${randomUUID()}`,
				...headers,
			},
		});

	const app = new Hono();
	app.post("/v1/responses", async (c) => {
		let body: Record<string, unknown>;
		try {
			body = await c.req.json();
		} catch {
			return error(
				400,
				"We could not parse the JSON body of your request.",
				"invalid_request_error",
				null,
			);
		}
		if (typeof body.model !== "string" || !Array.isArray(body.input))
			return error(
				400,
				"Missing required parameter: 'model' or 'input'.",
				"invalid_request_error",
				null,
			);
		const req: ResponsesRequest = {
			model: body.model,
			input: body.input as InputItem[],
			tools: ((body.tools as { name?: string; type: string }[]) ?? []).map((t) => t.name ?? t.type),
			stream: body.stream === true,
			headers: Object.fromEntries(
				Object.entries(c.req.header()).filter(([k]) => k !== "authorization"),
			),
			authorized: c.req.header("authorization") === `Bearer ${apiKey}`,
		};
		requests.push(req);
		if (!req.authorized)
			return error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key");
		const turn = queue.shift() ?? {
			status: 500,
			message: "Responses double: the script has no turn left",
		};
		if ("status" in turn) {
			const rate = turn.status === 429;
			return error(
				turn.status,
				turn.message ??
					(rate
						? `Rate limit reached for ${req.model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.`
						: "The server had an error while processing your request."),
				turn.type ?? ERROR_TYPES[turn.status] ?? "server_error",
				turn.code ?? (rate ? "rate_limit_exceeded" : null),
				{
					...(rate ? { "retry-after": "20", "x-ratelimit-remaining-requests": "0" } : {}),
					...turn.headers,
				},
			);
		}
		if (!("failed" in turn)) {
			const u = turn.usage ?? DEFAULT_USAGE;
			bill(billed, {
				inputTokens: u.input - u.cached,
				outputTokens: u.output,
				cacheReadTokens: u.cached,
			});
		}
		return new Response(sse(req.model, turn, ++calls), {
			headers: {
				"content-type": "text/event-stream",
				"cache-control": "no-cache",
				"x-request-id": `req_${calls}`,
			},
		});
	});
	app.all("*", (c) => {
		unexpected.push(`${c.req.method} ${new URL(c.req.url).pathname}`);
		return error(404, "Unknown request URL.", "invalid_request_error", "unknown_url");
	});

	const { port, stop } = await serveLocal(app);
	return {
		url: `http://127.0.0.1:${port}/v1`,
		apiKey,
		requests,
		unexpected,
		billed,
		script: (...turns) => {
			queue.push(...turns);
		},
		stop,
	};
}

/** The event stream of one response: its output items one by one, then response.completed. */
function sse(model: string, turn: Exclude<ResponsesTurn, { status: number }>, n: number): string {
	const id = `resp_double${n}`;
	const created_at = Math.floor(Date.now() / 1000);
	const response = (status: string, output: unknown[] = [], extra = {}) => ({
		id,
		object: "response",
		created_at,
		status,
		model,
		output,
		...extra,
	});
	const events: Record<string, unknown>[] = [
		{ type: "response.created", response: response("in_progress") },
	];
	if ("failed" in turn) {
		events.push({
			type: "response.failed",
			response: response("failed", [], { error: turn.failed }),
		});
		return encode(events);
	}
	const output: Record<string, unknown>[] = [];
	const text = turn.text;
	if (text !== undefined) {
		const msgId = `msg_double${n}`;
		const part = { type: "output_text", text, annotations: [] };
		const item = {
			type: "message",
			id: msgId,
			status: "completed",
			role: "assistant",
			content: [part],
		};
		events.push(
			{
				type: "response.output_item.added",
				output_index: output.length,
				item: { ...item, status: "in_progress", content: [] },
			},
			{
				type: "response.output_text.delta",
				item_id: msgId,
				output_index: output.length,
				content_index: 0,
				delta: text,
			},
			{
				type: "response.output_text.done",
				item_id: msgId,
				output_index: output.length,
				content_index: 0,
				text,
			},
			{ type: "response.output_item.done", output_index: output.length, item },
		);
		output.push(item);
	}
	for (const [i, call] of ("calls" in turn ? turn.calls : []).entries()) {
		const ids = { id: `fc_double${n}_${i}`, call_id: `call_double${n}_${i}`, name: call.name };
		const [item, pending] =
			"input" in call
				? [
						{ type: "custom_tool_call", ...ids, input: call.input, status: "completed" },
						{ type: "custom_tool_call", ...ids, input: "", status: "in_progress" },
					]
				: [
						{
							type: "function_call",
							...ids,
							arguments: JSON.stringify(call.arguments),
							status: "completed",
						},
						{ type: "function_call", ...ids, arguments: "", status: "in_progress" },
					];
		events.push(
			{ type: "response.output_item.added", output_index: output.length, item: pending },
			{ type: "response.output_item.done", output_index: output.length, item },
		);
		output.push(item);
	}
	const u = turn.usage ?? DEFAULT_USAGE;
	events.push({
		type: "response.completed",
		response: response("completed", output, {
			usage: {
				input_tokens: u.input,
				input_tokens_details: { cached_tokens: u.cached },
				output_tokens: u.output,
				output_tokens_details: { reasoning_tokens: 0 },
				total_tokens: u.input + u.output,
			},
		}),
	});
	return encode(events);
}

const encode = (events: Record<string, unknown>[]): string =>
	events
		.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`)
		.join("");
