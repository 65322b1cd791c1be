import type { ConfigState } from "../config/load";
import type { Settings } from "../settings";

// What `npm start` prints: what works, and what is missing with how to add it.

export interface Readiness {
	ok: string[];
	missing: string[];
}

export function readiness(
	settings: Settings,
	config: ConfigState,
	env: NodeJS.ProcessEnv,
): Readiness {
	const ok: string[] = [];
	const missing: string[] = [];
	if (config.status === "missing")
		missing.push(
			`no config at ${config.file}: copy .lisa/config.example.yaml there (or set LISA_CONFIG) and edit it`,
		);
	else if (config.status === "invalid") missing.push(config.error.message);
	else
		ok.push(
			`config ${config.file}: source ${config.config.source}, ${config.config.repos.length} repo(s), models ${config.config.models.join(" → ")}`,
		);

	const source = config.status === "ok" ? config.config.source : "linear";
	if (source === "linear") {
		if (!settings.linear.apiKey)
			missing.push("LINEAR_API_KEY is not set: Lisa cannot read or update Linear issues");
		if (!settings.linear.webhookSecret)
			missing.push(
				"LINEAR_WEBHOOK_SECRET is not set: /webhooks/linear refuses every delivery (401)",
			);
		if (settings.linear.apiUrl) ok.push(`Linear API at ${settings.linear.apiUrl}`);
	}
	if (source === "trello") {
		if (!settings.trello.apiKey || !settings.trello.token)
			missing.push("TRELLO_API_KEY and TRELLO_TOKEN must be set: Lisa cannot read or update cards");
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
	if (!env.GITHUB_TOKEN)
		missing.push("GITHUB_TOKEN is not set: tasks cannot push or open pull requests on GitHub");
	if (settings.github.apiUrl) ok.push(`GitHub API at ${settings.github.apiUrl}`);
	return { ok, missing };
}

export function banner(input: {
	url: string;
	publicUrl: string;
	apiToken: string;
	dataDir: string;
	readiness: Readiness;
}): string {
	const lines = [
		"",
		`Lisa is up at ${input.url}`,
		`  health:        ${input.url}/healthz`,
		`  dashboard:     ${input.url}/`,
		`  runs API:      ${input.url}/api/runs`,
		`  API token:     ${input.apiToken}   (Authorization: Bearer <token>; LISA_API_TOKEN)`,
		`  Linear hook:   ${input.publicUrl}/webhooks/linear`,
		`  Trello hook:   ${input.publicUrl}/webhooks/trello`,
		`  GitHub hook:   ${input.publicUrl}/webhooks/github`,
		"  polling mode:  npm run lisa -- run (no public URL needed)",
		`  data dir:      ${input.dataDir}`,
		"",
		...input.readiness.ok.map((l) => `  ✓ ${l}`),
		...input.readiness.missing.map((l) => `  ✗ ${l}`),
		"",
	];
	return lines.join("\n");
}
