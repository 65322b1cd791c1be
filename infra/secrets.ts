import { AGENT_SECRETS, type AgentSecretName, SECRETS, type SecretName } from "../src/config/links";

// Every credential is an sst.Secret, set per stage with `npx sst secret set <Name> <value>`.

/**
 * Whether a secret has a value in this stage. `sst deploy` hands each value to the config as
 * `SST_SECRET_<Name>` (that is how sst.Secret reads it), so optional credentials that are not set
 * create nothing.
 */
export const hasValue = (name: string) => Boolean(process.env[`SST_SECRET_${name}`]);

const APP_SECRETS = ["GithubAppId", "GithubAppPrivateKey", "GithubAppInstallationId"] as const;

/**
 * Whether Lisa is a GitHub App in this stage (any of its secrets set: then all three are required):
 * each step then gets a token minted for it, and no task holds GithubToken
 * (docs/trackers.md › As a GitHub App (a token per step)).
 */
export const githubApp = () => APP_SECRETS.some(hasValue);

/** Without these a deploy stops and says which `sst secret set` to run; the others may stay empty. */
const REQUIRED: readonly SecretName[] = [
	"ApiToken",
	...(githubApp() ? APP_SECRETS : (["GithubToken"] as const)),
];

const secret = (name: string) =>
	new sst.Secret(name, (REQUIRED as readonly string[]).includes(name) ? undefined : "");

export const secrets = Object.fromEntries(
	Object.keys(SECRETS).map((name) => [name, secret(name)]),
) as Record<SecretName, sst.Secret>;

export const agentSecrets = Object.fromEntries(
	Object.keys(AGENT_SECRETS).map((name) => [name, secret(name)]),
) as Record<AgentSecretName, sst.Secret>;

/** What the pipeline handlers need: tracker access only. */
export const trackerSecrets = [
	secrets.LinearApiKey,
	secrets.GithubToken,
	secrets.GithubAppId,
	secrets.GithubAppPrivateKey,
	secrets.GithubAppInstallationId,
	secrets.TrelloApiKey,
	secrets.TrelloToken,
];

/** What the API needs: webhook secrets, the API tokens, and tracker access (self-trigger checks). */
export const apiSecrets = [
	secrets.ApiToken,
	secrets.ReadToken,
	secrets.LinearWebhookSecret,
	secrets.GithubWebhookSecret,
	secrets.TrelloAppSecret,
	...trackerSecrets,
];
