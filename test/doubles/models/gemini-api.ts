// A local Gemini API (generativelanguage.googleapis.com) as @google/genai calls it, for the real
// gemini CLI: POST /v1beta/models/{model}:streamGenerateContent?alt=sse (and :generateContent,
// :countTokens), the key in `x-goog-api-key`, candidates whose parts are text or function calls,
// usageMetadata, and failures in Google's error format. The chat turns come from a script.
import { Hono } from "hono";
import type { TokenUsage } from "../../../src/domain/usage";
import { serveLocal } from "../serve";
import { bill, noTokens } from "./billed";

export interface GeminiUsage {
	promptTokenCount: number;
	candidatesTokenCount: number;
	cachedContentTokenCount?: number;
}

/** A failure as Google sends it; `details` are the google.rpc details (QuotaFailure, RetryInfo…). */
export interface GeminiFailure {
	code: number;
	message?: string;
	status?: string;
	details?: Record<string, unknown>[];
}

/** One model turn: text, function calls, or both; or a failure. */
type GeminiTurn =
	| {
			text?: string;
			calls?: { name: string; args: Record<string, unknown> }[];
			usage?: GeminiUsage;
	  }
	| { error: GeminiFailure };

type GeminiMethod = "streamGenerateContent" | "generateContent" | "countTokens";

interface GeminiPart {
	text?: string;
	functionCall?: { name: string; args?: Record<string, unknown> };
	functionResponse?: { id?: string; name: string; response?: Record<string, unknown> };
	thought?: boolean;
}

export interface GeminiRequest {
	method: GeminiMethod;
	model: string;
	/** The key the request carried (`x-goog-api-key`), or undefined. */
	apiKey?: string;
	authorized: boolean;
	contents: { role: string; parts: GeminiPart[] }[];
	/** The function declarations offered to the model, by name. */
	tools: string[];
	body: Record<string, unknown>;
}

export interface GeminiDouble {
	/** The origin, as GOOGLE_GEMINI_BASE_URL takes it (the SDK appends `/v1beta/…`). */
	readonly url: string;
	readonly apiKey: string;
	/** Every request received, in order. */
	readonly requests: GeminiRequest[];
	/** The chat requests (streamGenerateContent) only. */
	chats(): GeminiRequest[];
	/** Queues chat turns; each chat request takes the next one. */
	script(...turns: GeminiTurn[]): void;
	/** Answers chat requests when the script is empty (by default: a 500 saying it ran out). */
	otherwise(turn: (req: GeminiRequest) => GeminiTurn): void;
	/** The tokens its answers reported, in Lisa's counts (cached input apart). */
	readonly billed: TokenUsage;
	stop(): Promise<void>;
}

const DEFAULT_GEMINI_USAGE: GeminiUsage = { promptTokenCount: 100, candidatesTokenCount: 10 };

const DEFAULT_GEMINI_KEY = "AIzaTestGeminiDouble0123456789abcdefghij";

/** Google's canonical status names (google.rpc.Code) for the HTTP codes the API answers with. */
const STATUS: Record<number, string> = {
	400: "INVALID_ARGUMENT",
	401: "UNAUTHENTICATED",
	403: "PERMISSION_DENIED",
	404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED",
	500: "INTERNAL",
	503: "UNAVAILABLE",
};

/**
 * The 429 the API sends when a daily quota is spent: its QuotaFailure names a per-day quota, which
 * the CLI takes for terminal (no retry), so a test of it does not sit through backoff.
 */
export function dailyQuotaExhausted(model: string): GeminiFailure {
	return {
		code: 429,
		message: `You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 250, model: ${model}`,
		details: [
			{
				"@type": "type.googleapis.com/google.rpc.QuotaFailure",
				violations: [
					{
						quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
						quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
						quotaDimensions: { location: "global", model },
						quotaValue: "250",
					},
				],
			},
			{
				"@type": "type.googleapis.com/google.rpc.Help",
				links: [
					{
						description: "Learn more about Gemini API quotas",
						url: "https://ai.google.dev/gemini-api/docs/rate-limits",
					},
				],
			},
		],
	};
}

const failure = (f: GeminiFailure) =>
	new Response(
		JSON.stringify({
			error: {
				code: f.code,
				message: f.message ?? "The service is currently unavailable.",
				status: f.status ?? STATUS[f.code] ?? "UNKNOWN",
				...(f.details ? { details: f.details } : {}),
			},
		}),
		{ status: f.code, headers: { "content-type": "application/json; charset=UTF-8" } },
	);

/** The parts of a whole answer: its text deltas as one text part, then the calls. */
const merged = (parts: GeminiPart[]): GeminiPart[] => {
	const text = parts.map((p) => p.text ?? "").join("");
	return [...(text ? [{ text }] : []), ...parts.filter((p) => p.text === undefined)];
};

/** The GenerateContentResponse chunks of one turn: text first (in two deltas), then the calls. */
function chunks(turn: Exclude<GeminiTurn, { error: GeminiFailure }>, model: string, id: string) {
	const usage = turn.usage ?? DEFAULT_GEMINI_USAGE;
	const parts: GeminiPart[][] = [];
	if (turn.text) {
		const half = Math.ceil(turn.text.length / 2);
		parts.push([{ text: turn.text.slice(0, half) }]);
		if (turn.text.length > half) parts.push([{ text: turn.text.slice(half) }]);
	}
	if (turn.calls?.length)
		parts.push(turn.calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })));
	if (parts.length === 0) parts.push([{ text: "" }]);
	return parts.map((p, i) => {
		const last = i === parts.length - 1;
		return {
			candidates: [
				{
					content: { role: "model", parts: p },
					index: 0,
					...(last ? { finishReason: "STOP" } : {}),
				},
			],
			// The API reports the prompt on every chunk and the full count on the last.
			usageMetadata: last
				? {
						...usage,
						totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount,
						promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.promptTokenCount }],
					}
				: { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
			modelVersion: model,
			responseId: id,
		};
	});
}

type Schema = {
	type?: string;
	enum?: unknown[];
	properties?: Record<string, Schema>;
	items?: Schema;
};

/**
 * The smallest answer that fits a structured-output schema (`generationConfig.responseSchema` or
 * `responseJsonSchema`): what the real API guarantees, so the CLI's side requests (its model
 * router, its next-speaker check) parse as they would in production.
 */
function fitting(schema: Schema | undefined): unknown {
	if (!schema) return {};
	if (schema.enum?.length) return schema.enum[0];
	switch (schema.type?.toLowerCase()) {
		case "object":
			return Object.fromEntries(
				Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fitting(v)]),
			);
		case "array":
			return [];
		case "integer":
		case "number":
			return 1;
		case "boolean":
			return false;
		default:
			return "scripted";
	}
}

export async function startGeminiDouble(opts: { apiKey?: string } = {}): Promise<GeminiDouble> {
	const apiKey = opts.apiKey ?? DEFAULT_GEMINI_KEY;
	const requests: GeminiRequest[] = [];
	const queue: GeminiTurn[] = [];
	const billed = noTokens();
	let fallback: (req: GeminiRequest) => GeminiTurn = () => ({
		error: { code: 500, message: "Gemini double: the script has no turn left" },
	});
	let n = 0;

	const app = new Hono();
	app.post("/v1beta/models/:call", async (c) => {
		const call = c.req.param("call");
		const [model, method] = call.split(":") as [string, GeminiMethod | undefined];
		if (!method || !["streamGenerateContent", "generateContent", "countTokens"].includes(method))
			return failure({ code: 404, message: `Method not found: ${call}` });
		let body: Record<string, unknown>;
		try {
			body = await c.req.json();
		} catch {
			return failure({ code: 400, message: "Invalid JSON payload received." });
		}
		const key = c.req.header("x-goog-api-key");
		const tools = (body.tools as { functionDeclarations?: { name: string }[] }[] | undefined) ?? [];
		const req: GeminiRequest = {
			method,
			model,
			apiKey: key,
			authorized: key === apiKey,
			contents: (body.contents as GeminiRequest["contents"]) ?? [],
			tools: tools.flatMap((t) => t.functionDeclarations?.map((d) => d.name) ?? []),
			body,
		};
		requests.push(req);
		if (!req.authorized)
			return failure({
				code: 400,
				status: "INVALID_ARGUMENT",
				message: "API key not valid. Please pass a valid API key.",
				details: [
					{
						"@type": "type.googleapis.com/google.rpc.ErrorInfo",
						reason: "API_KEY_INVALID",
						domain: "googleapis.com",
						metadata: { service: "generativelanguage.googleapis.com" },
					},
				],
			});
		if (method === "countTokens")
			return c.json({ totalTokens: Math.ceil(JSON.stringify(req.contents).length / 4) });
		// Side requests (the CLI's model router, its checks) are not chat turns: an answer that fits
		// the schema they ask for.
		const config = (body.generationConfig ?? {}) as Record<string, Schema | undefined>;
		const turn =
			method === "generateContent"
				? { text: JSON.stringify(fitting(config.responseJsonSchema ?? config.responseSchema)) }
				: (queue.shift() ?? fallback(req));
		if ("error" in turn) return failure(turn.error);
		n++;
		const events = chunks(turn, model, `double-${n}`);
		const u = turn.usage ?? DEFAULT_GEMINI_USAGE;
		const cached = u.cachedContentTokenCount ?? 0;
		bill(billed, {
			inputTokens: u.promptTokenCount - cached,
			outputTokens: u.candidatesTokenCount,
			cacheReadTokens: cached,
		});
		// Unstreamed, the answer is one response: the last chunk with every chunk's parts.
		if (method === "generateContent") {
			const parts = events.flatMap((e) => e.candidates[0]?.content.parts ?? []);
			const last = events[events.length - 1] as (typeof events)[number];
			return c.json({
				...last,
				candidates: [{ ...last.candidates[0], content: { role: "model", parts: merged(parts) } }],
			});
		}
		return new Response(events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join(""), {
			headers: { "content-type": "text/event-stream" },
		});
	});

	const { port, stop } = await serveLocal(app);
	return {
		url: `http://127.0.0.1:${port}`,
		apiKey,
		requests,
		billed,
		chats: () => requests.filter((r) => r.method === "streamGenerateContent"),
		script: (...turns) => {
			queue.push(...turns);
		},
		otherwise: (turn) => {
			fallback = turn;
		},
		stop,
	};
}
