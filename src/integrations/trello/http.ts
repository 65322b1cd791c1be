import { answerFailure, trackerRequest } from "../http";
import { TrackerError } from "../tracker";

// One request to Trello's REST API: the tracker's calls (./client.ts) and the API's lookup of
// Lisa's own member (./actor.ts) share the authorisation and Trello's not-found answers; the
// failure rules are every plain tracker request's (../http.ts).

export const TRELLO_API_URL = "https://api.trello.com/1";
const TIMEOUT_MS = 30_000;

export interface TrelloAuth {
	apiKey: string;
	token: string;
}

/** The answer's status and body; 404 also for Trello's 400 "invalid id" (a malformed id). */
export async function trelloRequest<T>(
	auth: TrelloAuth,
	baseUrl: string,
	method: string,
	path: string,
	what: string,
	params: Record<string, string> = {},
): Promise<{ status: number; body: T | undefined }> {
	const url = new URL(`${baseUrl.replace(/\/+$/, "")}${path}`);
	for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
	const failed = `Trello: ${what} failed`;
	const res = await trackerRequest(
		failed,
		url,
		{
			method,
			headers: {
				accept: "application/json",
				authorization: `OAuth oauth_consumer_key="${auth.apiKey}", oauth_token="${auth.token}"`,
			},
		},
		TIMEOUT_MS,
	);
	// Trello answers 404 for an unknown id and 400 "invalid id" for a malformed one.
	if (res.status === 404 || (res.status === 400 && /invalid id/i.test(res.text)))
		return { status: 404, body: undefined };
	if (!res.ok) throw answerFailure(failed, res.status, res.text.slice(0, 200));
	return { status: res.status, body: res.text ? (JSON.parse(res.text) as T) : undefined };
}

/** The answer's body; a 404 is a permanent failure ("not found"). */
export async function trelloCall<T>(
	auth: TrelloAuth,
	baseUrl: string,
	method: string,
	path: string,
	what: string,
	params?: Record<string, string>,
): Promise<T> {
	const res = await trelloRequest<T>(auth, baseUrl, method, path, what, params);
	if (res.status === 404) throw new TrackerError(`Trello: ${what} failed: not found`, false);
	return res.body as T;
}
