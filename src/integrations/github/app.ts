import { createAppAuth, type InstallationAccessTokenAuthentication } from "@octokit/auth-app";
import { Octokit } from "octokit";
import type { GitHubApp } from "../../config/settings";
import type { RepoAccess } from "../../domain/run";

// Lisa as a GitHub App (docs/trackers.md › As a GitHub App (a token per step)): the pipeline acts
// as the App's installation, and each step's task gets a token of its own, minted at launch for the
// step's repositories and the permissions the step needs, that GitHub ends within the hour.

/** How Lisa authenticates on GitHub: a token (personal or any other) or the App. */
export type GitHubAuth = string | GitHubApp;

/**
 * The installation permissions a step's token gets; metadata (read) comes with every token. A
 * follow-up round's task only pushes: the pipeline reads the CI and answers on the pull request.
 */
const STEP_PERMISSIONS: Record<RepoAccess, Record<string, "read" | "write">> = {
	read: { contents: "read" },
	write: { contents: "write", pull_requests: "write" },
	"follow-up": { contents: "write" },
};

/** A step's token and when GitHub ends it (ISO 8601). */
export interface StepToken {
	token: string;
	expiresAt: string;
}

/**
 * octokit with `auth` at `apiUrl` (GitHub Enterprise or a double): as the App's installation, its
 * tokens refreshed by octokit; a rate limit is retried twice.
 */
export function githubClient(auth?: GitHubAuth, apiUrl?: string): Octokit {
	return new Octokit({
		...(typeof auth === "object" ? { authStrategy: createAppAuth, auth: { ...auth } } : { auth }),
		...(apiUrl ? { baseUrl: apiUrl } : {}),
		throttle: {
			onRateLimit: (_a: number, _o: unknown, _k: unknown, retryCount: number) => retryCount < 2,
			onSecondaryRateLimit: (_a: number, _o: unknown, _k: unknown, retryCount: number) =>
				retryCount < 2,
		},
	});
}

/** A token held to the repositories `slugs` (`owner/name`, one owner: the installation's) and `access`. */
export async function mintStepToken(
	app: GitHubApp,
	apiUrl: string | undefined,
	slugs: readonly string[],
	access: RepoAccess,
): Promise<StepToken> {
	// A token covers repositories of the installation's account only, which GitHub names without it.
	const owners = new Set(slugs.map((s) => s.slice(0, s.indexOf("/")).toLowerCase()));
	if (owners.size > 1)
		throw new Error(
			`one step's repositories (${slugs.join(", ")}) belong to several owners: a GitHub App's token covers one installation's account`,
		);
	const repositoryNames = slugs.map((s) => s.slice(s.indexOf("/") + 1));
	const minted = (await githubClient(app, apiUrl).auth({
		type: "installation",
		repositoryNames,
		permissions: STEP_PERMISSIONS[access],
		refresh: true,
	})) as InstallationAccessTokenAuthentication;
	return { token: minted.token, expiresAt: minted.expiresAt };
}
