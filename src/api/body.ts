import type { Context } from "hono";

// Webhook bodies are verified as bytes, then decoded strictly: bytes that are not UTF-8 are refused,
// never turned into U+FFFD, so no two different bodies read as the same text.

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The bytes as UTF-8 text, or undefined when they are not valid UTF-8. */
export function decodeUtf8(raw: Uint8Array): string | undefined {
	try {
		return strictUtf8.decode(raw);
	} catch {
		return undefined;
	}
}

/** The JSON of a verified body, or the 400 that says why there is none. */
export function verifiedJson<T>(
	c: Context,
	raw: Uint8Array,
): { payload: T; answer?: undefined } | { payload?: undefined; answer: Response } {
	const text = decodeUtf8(raw);
	if (text === undefined) return { answer: c.json({ error: "body is not valid UTF-8" }, 400) };
	let payload: unknown;
	try {
		payload = JSON.parse(text);
	} catch {
		return { answer: c.json({ error: "body is not valid JSON" }, 400) };
	}
	if (typeof payload !== "object" || payload === null || Array.isArray(payload))
		return { answer: c.json({ error: "body is not a JSON object" }, 400) };
	return { payload: payload as T };
}
