import { answerFailure, parseJson, trackerRequest } from "../http";

// Who Lisa is on GitHub, with one request and no octokit: the API asks it for every webhook that
// names an actor, and its bundle stays small (docs/architecture.md › Things that bite).

export const GITHUB_API_URL = "https://api.github.com";
const TIMEOUT_MS = 10_000;

/**
 * The login of the token's user; undefined when GitHub will not say (401, 403, 404): a GitHub
 * App's installation token cannot read /user, and without GITHUB_BOT_LOGIN Lisa cannot tell its
 * own events (its labels are status labels and its comments carry the marker, so neither triggers
 * a run anyway).
 */
export async function gitHubLogin(
	token: string,
	apiUrl = GITHUB_API_URL,
): Promise<string | undefined> {
	const failed = "GitHub: reading the token's user failed";
	const res = await trackerRequest(
		failed,
		`${apiUrl.replace(/\/+$/, "")}/user`,
		{
			headers: {
				accept: "application/vnd.github+json",
				authorization: `Bearer ${token}`,
				"user-agent": "lisa",
				"x-github-api-version": "2022-11-28",
			},
		},
		TIMEOUT_MS,
	);
	if (res.status === 401 || res.status === 403 || res.status === 404) return undefined;
	if (res.ok) {
		const login = parseJson<{ login?: string }>(res.text)?.login;
		if (login) return login;
	}
	throw answerFailure(failed, res.status, res.text.slice(0, 200));
}
