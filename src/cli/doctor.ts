import { SIGN_IN_CODE_TTL_MS } from "../api/sign-in";
import type { ConfigState } from "../config/load";
import type { SourceName } from "../config/schema";
import type { Settings } from "../config/settings";
import { trelloCallbackUrl } from "../integrations/trello/webhook";

// What is ready and what is missing, as text: `npm start`'s readiness list and banner, and the
// pieces `lisa doctor` shares with it. Pure: the checks that touch the world are in doctor-checks.ts.

export interface Check {
	/** "skip": could not be checked (an earlier check failed); not a failure by itself. */
	ok: boolean | "skip";
	label: string;
	/** How to fix it (one line). */
	hint?: string;
}

export function configCheck(config: ConfigState): Check {
	if (config.status === "missing")
		return {
			ok: false,
			label: `no config at ${config.file}`,
			hint: "run `npx lisa init` (or copy .lisa/config.example.yaml there, or set LISA_CONFIG)",
		};
	if (config.status === "invalid")
		return {
			ok: false,
			// Each problem carries its own fix: a generic hint after them would only repeat them.
			label: config.error.message,
		};
	const c = config.config;
	return {
		ok: true,
		label: `config ${config.file}: source ${c.source}, ${c.repos.length} repo(s), models ${c.models.join(" → ")}`,
	};
}

export const GITHUB_TOKEN_MISSING =
	"GITHUB_TOKEN is not set: tasks cannot push or open pull requests on GitHub";
export const LINEAR_API_KEY_MISSING =
	"LINEAR_API_KEY is not set: Lisa cannot read or update Linear issues";
export const TRELLO_CREDENTIALS_MISSING =
	"TRELLO_API_KEY and TRELLO_TOKEN must be set: Lisa cannot read or update cards";

/**
 * The tracker's missing credentials, as one sentence; undefined when they are set. GitHub's token
 * is not only the tracker's: readiness reports it (GITHUB_TOKEN_MISSING) whatever the source.
 */
function trackerCredentialsMissing(source: SourceName, settings: Settings): string | undefined {
	if (source === "linear" && !settings.linear.apiKey) return LINEAR_API_KEY_MISSING;
	if (source === "trello" && !(settings.trello.apiKey && settings.trello.token))
		return TRELLO_CREDENTIALS_MISSING;
	return undefined;
}

export function formatChecks(checks: Check[]): string[] {
	return checks.flatMap((c) => {
		if (c.ok === "skip") return [`- ${c.label}`];
		if (c.ok) return [`✓ ${c.label}`];
		return [`✗ ${c.label}`, ...(c.hint ? [`    fix: ${c.hint}`] : [])];
	});
}

// What `npm start` prints: what works, and what is missing with how to add it.

export interface Readiness {
	ok: string[];
	missing: string[];
}

/** `agents`: the checks of the agent CLIs the config's `models` needs (none without a config). */
export function readiness(
	settings: Settings,
	config: ConfigState,
	agents: Check[] = [],
): Readiness {
	const ok: string[] = [];
	const missing: string[] = [];
	const cfg = configCheck(config);
	if (cfg.ok === true) ok.push(cfg.label);
	else missing.push(config.status === "missing" ? `${cfg.label}: ${cfg.hint}` : cfg.label);
	for (const a of agents)
		if (a.ok === true) ok.push(a.label);
		else if (a.ok === false) missing.push(a.hint ? `${a.label}: ${a.hint}` : a.label);

	const source = config.status === "ok" ? config.config.source : "linear";
	const credentials = trackerCredentialsMissing(source, settings);
	if (credentials) missing.push(credentials);
	if (source === "linear") {
		if (!settings.linear.webhookSecret)
			missing.push(
				"LINEAR_WEBHOOK_SECRET is not set: /webhooks/linear refuses every delivery (401)",
			);
		if (settings.linear.apiUrl) ok.push(`Linear API at ${settings.linear.apiUrl}`);
	}
	if (source === "trello") {
		if (!settings.trello.appSecret)
			missing.push("TRELLO_APP_SECRET is not set: /webhooks/trello refuses every delivery (401)");
		if (settings.trello.apiUrl) ok.push(`Trello API at ${settings.trello.apiUrl}`);
	}
	if (!settings.github.webhookSecret)
		missing.push(
			source === "github"
				? "GITHUB_WEBHOOK_SECRET is not set: /webhooks/github refuses every delivery (401)"
				: "GITHUB_WEBHOOK_SECRET is not set (optional): merged pull requests are not followed up",
		);
	if (!settings.github.token && !settings.github.app) missing.push(GITHUB_TOKEN_MISSING);
	if (settings.github.apiUrl) ok.push(`GitHub API at ${settings.github.apiUrl}`);
	return { ok, missing };
}

/**
 * Who the agents run as, in one line: their own uids (isolated), or the stack's user, with what
 * that exposes and how to isolate them.
 */
export function agentsLine(
	uids: { first: number; last: number } | undefined,
	confined = false,
): string {
	const network = confined
		? "each in a network of its own that reaches only its model broker and, through Lisa's egress proxy, the code host and the repo's network.allow"
		: "with the machine's network: they can reach any host";
	if (uids)
		return `  agents:        run as uids ${uids.first}-${uids.last}, one per running step: they cannot read Lisa's secrets (LISA_AGENT_UIDS); ${network}`;
	const who = process.getuid?.() === 0 ? "root" : `your own user (uid ${process.getuid?.()})`;
	return `  ! agents:      run as ${who}: an agent can read Lisa's secrets (GITHUB_TOKEN, tracker keys, the model keys, the API token, in this process's and the tasks' environments and the data dir), use its local services and reach any host. To isolate them, start Lisa as root (each step's agent then gets a uid of its own and a network of its own) or deploy to AWS (docs/security.md › Security)`;
}

export function banner(input: {
	url: string;
	publicUrl: string;
	apiToken: string;
	readToken: string;
	/** The dashboard with a one-time sign-in code (src/api/sign-in.ts). */
	signInLink: string;
	dataDir: string;
	agentUids?: { first: number; last: number };
	/** Whether each agent's network is confined to the broker and the egress proxy. */
	agentsConfined?: boolean;
	/** Where the steps' workspaces are. */
	workspaces: string;
	/** What the agents reach outside the data dir, and why (agent-reach.ts). */
	moved?: string;
	/** Where each step runs (LocalStack.tasks). */
	tasks: string;
	readiness: Readiness;
}): string {
	// What needs fixing first (the config's problems before the rest), then how to reach Lisa.
	const lines = [
		"",
		`Lisa is up at ${input.url}`,
		...(input.readiness.missing.length
			? ["  needs attention:", ...input.readiness.missing.map((l) => `  ✗ ${l}`), ""]
			: []),
		`  health:        ${input.url}/healthz`,
		`  dashboard:     ${input.signInLink}   (signs in once, within ${SIGN_IN_CODE_TTL_MS / 60_000} min; then paste the read token)`,
		`  runs API:      ${input.url}/api/runs`,
		`  API token:     ${input.apiToken}   (Authorization: Bearer <token>; LISA_API_TOKEN)`,
		`  read token:    ${input.readToken}   (read-only, for dashboards; LISA_READ_TOKEN)`,
		`  Linear hook:   ${input.publicUrl}/webhooks/linear`,
		`  Trello hook:   ${trelloCallbackUrl(input.publicUrl)}`,
		`  GitHub hook:   ${input.publicUrl}/webhooks/github`,
		"  polling mode:  npx lisa run (no public URL needed)",
		"  command line:  npx lisa status | runs | logs | cancel | retry | doctor (docs/cli.md › Command line)",
		`  data dir:      ${input.dataDir}`,
		...(input.workspaces.startsWith(`${input.dataDir}/`)
			? []
			: [`  workspaces:    ${input.workspaces}`]),
		`  tasks:         ${input.tasks}`,
		agentsLine(input.agentUids, input.agentsConfined),
		...(input.moved ? [`  agent files:   ${input.moved}`] : []),
		"",
		...input.readiness.ok.map((l) => `  ✓ ${l}`),
		"  stop it:       Ctrl-C, or kill the npm process or its process group (README › Quick start)",
		"",
	];
	return lines.join("\n");
}
