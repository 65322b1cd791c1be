import { answerFailure, parseJson, trackerRequest } from "../http";
import { TrackerError } from "../tracker";

// Who Lisa is on Linear, with one GraphQL request and no SDK: the API asks it for every webhook
// that names an actor, and its bundle stays small without @linear/sdk
// (docs/architecture.md › Things that bite).

const LINEAR_API_URL = "https://api.linear.app/graphql";
const TIMEOUT_MS = 10_000;

/** `LINEAR_API_KEY` is a personal API key, or the OAuth access token of Lisa's Linear app. */
export const isLinearOAuthToken = (apiKey: string) => apiKey.startsWith("lin_oauth_");

/** The key goes only over HTTPS, or to a server on this machine (a double, a tunnel), as the SDK allows. */
function checkedUrl(apiUrl: string): URL {
	const url = new URL(apiUrl);
	const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
	if (url.protocol === "https:" || (url.protocol === "http:" && local)) return url;
	throw new TrackerError(`Linear: ${apiUrl} is not HTTPS; the API key is not sent there`, false);
}

interface GraphQLAnswer {
	data?: { viewer?: { id?: string } | null } | null;
	errors?: { message?: string; extensions?: { type?: string } }[];
}

/** The id of the Linear user (or app actor) the key belongs to. */
export async function linearViewerId(apiKey: string, apiUrl = LINEAR_API_URL): Promise<string> {
	const failed = "Linear: reading the API key's user failed";
	const res = await trackerRequest(
		failed,
		checkedUrl(apiUrl),
		{
			method: "POST",
			headers: {
				"content-type": "application/json",
				authorization: isLinearOAuthToken(apiKey) ? `Bearer ${apiKey}` : apiKey,
			},
			body: JSON.stringify({ query: "query LisaViewer { viewer { id } }" }),
		},
		TIMEOUT_MS,
	);
	const body = parseJson<GraphQLAnswer>(res.text);
	const id = body?.data?.viewer?.id;
	if (res.ok && id) return id;
	const error = body?.errors?.[0];
	// Linear reports a rate limit as a GraphQL error of type "ratelimited", whatever the status.
	throw answerFailure(
		failed,
		res.status,
		error?.message ?? "",
		error?.extensions?.type === "ratelimited",
	);
}
