import { AGENT_SECRETS, type AgentSecretName, SECRETS, type SecretName } from "../src/config/links";

// Every credential is an sst.Secret, set per stage with `npx sst secret set <Name> <value>`.

/** Without these a deploy stops and says which `sst secret set` to run; the others may stay empty. */
const REQUIRED: readonly string[] = ["ApiToken", "GithubToken"] satisfies SecretName[];

const secret = (name: string) => new sst.Secret(name, REQUIRED.includes(name) ? undefined : "");

export const secrets = Object.fromEntries(
	Object.keys(SECRETS).map((name) => [name, secret(name)]),
) as Record<SecretName, sst.Secret>;

export const agentSecrets = Object.fromEntries(
	Object.keys(AGENT_SECRETS).map((name) => [name, secret(name)]),
) as Record<AgentSecretName, sst.Secret>;

/**
 * Whether a secret has a value in this stage. `sst deploy` hands each value to the config as
 * `SST_SECRET_<Name>` (that is how sst.Secret reads it), so optional credentials that are not set
 * create nothing.
 */
export const hasValue = (name: string) => Boolean(process.env[`SST_SECRET_${name}`]);

/** What the pipeline handlers need: tracker access only. */
export const trackerSecrets = [
	secrets.LinearApiKey,
	secrets.GithubToken,
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
