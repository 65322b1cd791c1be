// Reading the CLIs' JSON output: values of unknown shape, taken only when they are what is expected.

export type Json = Record<string, unknown>;

/** Parses a JSON object; anything else (invalid JSON, an array, a scalar) is undefined. */
export function jsonObject(text: string): Json | undefined {
	try {
		const v = JSON.parse(text) as unknown;
		return v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
	} catch {
		return undefined;
	}
}

/** Parses one line of JSON output; anything else is not an event. */
export const jsonLine = (line: string): Json | undefined =>
	line.startsWith("{") ? jsonObject(line) : undefined;

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
/**
 * A token count as a CLI printed it: a whole number, none below 0, at most a billion (far more than
 * one model request uses), so no event, true or forged, can make a sum unrepresentable.
 */
export const tokens = (v: unknown): number => Math.min(1e9, Math.max(0, Math.floor(num(v))));
export const obj = (v: unknown): Json => (v && typeof v === "object" ? (v as Json) : {});

/** What a tool call works on: the first of its arguments `keys` names that is a string. */
export const toolSubject = (input: Json, keys: readonly string[]): string | undefined =>
	keys.map((k) => input[k]).find((v): v is string => typeof v === "string");
