import { isTransientStatus } from "../domain/transient";
import { TrackerError } from "./tracker";

// One plain request to a tracker's HTTP API, for what needs no SDK: Trello's client and the API's
// lookups of Lisa's own actor (./*/actor.ts). No answer is worth trying again; an answer is by its
// status, with the one rule (isTransientStatus).

export interface TrackerAnswer {
	status: number;
	ok: boolean;
	text: string;
}

/**
 * The answer, read whole. A request that gets none (refused, timed out, cut off) is a transient
 * TrackerError; `failed` begins its message ("GitHub: reading the token's user failed").
 */
export async function trackerRequest(
	failed: string,
	url: string | URL,
	init: RequestInit,
	timeoutMs: number,
): Promise<TrackerAnswer> {
	try {
		const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
		return { status: res.status, ok: res.ok, text: await res.text() };
	} catch (err) {
		throw new TrackerError(`${failed}: ${(err as Error).message}`, true, { cause: err });
	}
}

/** An answer that failed, with `detail` (the body's start, the API's message); `rateLimited` whatever the status. */
export function answerFailure(
	failed: string,
	status: number,
	detail: string,
	rateLimited = false,
): TrackerError {
	return new TrackerError(
		`${failed}: HTTP ${status} ${detail}`.trim(),
		rateLimited || isTransientStatus(status),
	);
}

/** The body as JSON; undefined when it is not JSON. */
export function parseJson<T>(text: string): T | undefined {
	try {
		return JSON.parse(text) as T;
	} catch {
		return undefined;
	}
}
