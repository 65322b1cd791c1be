import type { GitHubApp } from "../../config/settings";
import { answerFailure, parseJson, trackerRequest } from "../http";

// Who Lisa is on GitHub, with one request and no octokit: the API asks it for every webhook that
// names an actor, and its bundle stays small (docs/architecture.md › Things that bite).

const GITHUB_API_URL = "https://api.github.com";
const TIMEOUT_MS = 10_000;

/** A GitHub App's JWT. Its library is loaded only here: a token's API never carries it. */
async function appJwt(app: GitHubApp): Promise<string> {
	const { createAppAuth } = await import("@octokit/auth-app");
	return (await createAppAuth({ appId: app.appId, privateKey: app.privateKey })({ type: "app" }))
		.token;
}

/**
 * The login Lisa acts as: the token's user, or a GitHub App's `<slug>[bot]` (asked with the App's
 * JWT). Undefined when GitHub will not say (401, 403, 404): an installation token given as
 * GITHUB_TOKEN cannot read /user, and without GITHUB_BOT_LOGIN Lisa cannot tell its own events
 * (its labels are status labels and its comments carry the marker, so neither triggers a run anyway).
 */
export async function gitHubLogin(
	auth: string | GitHubApp,
	apiUrl = GITHUB_API_URL,
): Promise<string | undefined> {
	const app = typeof auth === "object";
	const failed = `GitHub: reading ${app ? "the App" : "the token's user"} failed`;
	const bearer = app ? await appJwt(auth) : auth;
	const res = await trackerRequest(
		failed,
		`${apiUrl.replace(/\/+$/, "")}/${app ? "app" : "user"}`,
		{
			headers: {
				accept: "application/vnd.github+json",
				authorization: `Bearer ${bearer}`,
				"user-agent": "lisa",
				"x-github-api-version": "2022-11-28",
			},
		},
		TIMEOUT_MS,
	);
	if (res.status === 401 || res.status === 403 || res.status === 404) return undefined;
	if (res.ok) {
		const who = parseJson<{ login?: string; slug?: string }>(res.text);
		const login = app ? who?.slug && `${who.slug}[bot]` : who?.login;
		if (login) return login;
	}
	throw answerFailure(failed, res.status, res.text.slice(0, 200));
}
