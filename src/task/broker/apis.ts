// The model APIs the broker serves (docs/security.md › Security): the paths it forwards (relative
// to the endpoint's base URL, which may or may not end in /v1), how a request names its model, how
// the key is sent, and how a refusal reads so that each CLI shows it as the API's own error.

export type ModelApi = "anthropic" | "responses" | "chat" | "gemini";

/** How the real key goes upstream. */
export type KeyHeader = "x-api-key" | "bearer" | "x-goog-api-key";

const PATHS: Record<ModelApi, RegExp> = {
	anthropic: /^(?:\/v1)?\/messages(?:\/count_tokens)?$/,
	responses: /^(?:\/v1)?\/responses$/,
	chat: /^(?:\/v1)?\/chat\/completions$/,
	gemini:
		/^\/v1(?:beta|alpha)?\/models\/([A-Za-z0-9._-]+):(?:generateContent|streamGenerateContent|countTokens)$/,
};

/** Whether the API serves `path` (a POST). */
export function servesPath(api: ModelApi, path: string): boolean {
	return PATHS[api].test(path);
}

/** The model a request asks for: in its path (Gemini) or its body. */
export function requestedModel(api: ModelApi, path: string, body: unknown): string | undefined {
	if (api === "gemini") return PATHS.gemini.exec(path)?.[1];
	const model = (body as { model?: unknown } | undefined)?.model;
	return typeof model === "string" ? model : undefined;
}

/** Whether an answer to `path` bills tokens (a count of them does not). */
export function billsTokens(path: string): boolean {
	return !/(?:count_tokens|:countTokens)$/.test(path);
}

/**
 * The query as it goes upstream: only what the API's clients need (Gemini's `alt=sse`, Anthropic's
 * `beta`); anything else (a field mask, another `alt`) could trim the usage report the broker reads.
 */
export function forwardedQuery(api: ModelApi, search: URLSearchParams): URLSearchParams {
	const out = new URLSearchParams();
	if (api === "gemini" && search.get("alt") === "sse") out.set("alt", "sse");
	if (api === "anthropic" && search.get("beta") === "true") out.set("beta", "true");
	return out;
}

/**
 * The request as it goes upstream: a streamed chat completion asks for its usage (the last chunk
 * carries it; clients that did not ask skip a chunk without choices, as the API documents).
 */
export function upstreamBody(
	api: ModelApi,
	body: Record<string, unknown>,
): Record<string, unknown> {
	if (api !== "chat" || body.stream !== true) return body;
	const options = (body.stream_options ?? {}) as Record<string, unknown>;
	return { ...body, stream_options: { ...options, include_usage: true } };
}

/** The key as a request header. */
export function keyHeader(header: KeyHeader, key: string): [string, string] {
	return header === "bearer" ? ["authorization", `Bearer ${key}`] : [header, key];
}

/** The placeholder key a client sent, wherever its API lets it send one. */
export function sentKey(
	headers: Record<string, string | string[] | undefined>,
	search: URLSearchParams,
): string | undefined {
	const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
	const bearer = one(headers.authorization)?.match(/^Bearer\s+(.+)$/i)?.[1];
	return (
		one(headers["x-api-key"]) ??
		one(headers["x-goog-api-key"]) ??
		bearer ??
		search.get("key") ??
		undefined
	);
}

/** Each refusal's status as Anthropic (and OpenAI) and Google name it. */
const ERROR_TYPES: Record<number, [anthropic: string, google: string]> = {
	400: ["invalid_request_error", "INVALID_ARGUMENT"],
	401: ["authentication_error", "UNAUTHENTICATED"],
	403: ["permission_error", "PERMISSION_DENIED"],
	404: ["not_found_error", "NOT_FOUND"],
	429: ["rate_limit_error", "RESOURCE_EXHAUSTED"],
	502: ["api_error", "UNAVAILABLE"],
};

/** A refusal in the API's own error shape, so the CLI shows its message and does not retry it. */
export function refusal(api: ModelApi, status: number, message: string): Record<string, unknown> {
	const [type, google] = ERROR_TYPES[status] ?? ["api_error", "UNKNOWN"];
	switch (api) {
		case "anthropic":
			return { type: "error", error: { type, message } };
		case "gemini":
			return { error: { code: status, message, status: google } };
		default:
			return { error: { message, type, code: "lisa_broker" } };
	}
}
