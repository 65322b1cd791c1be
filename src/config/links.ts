// The names under which infra/ links resources to the functions, and the variables they stand for.
// infra/ creates them; src/config/settings.ts reads them. Pure data, so both sides can import it.

export const LINK = {
	table: "Table",
	intakeQueue: "IntakeQueue",
	eventsQueue: "EventsQueue",
	/** The agent task: where and how to run it (cluster, task definition, network, capacity). */
	agent: "AgentTask",
} as const;

/** `startedBy` of every agent task: the EventBridge rule selects Lisa's tasks by this prefix. */
export const STARTED_BY_PREFIX = "lisa-";

/** The pipeline's credentials: each `sst.Secret` and the variable it stands for. */
export const SECRETS = {
	ApiToken: "LISA_API_TOKEN",
	ReadToken: "LISA_READ_TOKEN",
	LinearApiKey: "LINEAR_API_KEY",
	LinearWebhookSecret: "LINEAR_WEBHOOK_SECRET",
	GithubToken: "GITHUB_TOKEN",
	GithubAppId: "GITHUB_APP_ID",
	GithubAppPrivateKey: "GITHUB_APP_PRIVATE_KEY",
	GithubAppInstallationId: "GITHUB_APP_INSTALLATION_ID",
	GithubWebhookSecret: "GITHUB_WEBHOOK_SECRET",
	TrelloApiKey: "TRELLO_API_KEY",
	TrelloToken: "TRELLO_TOKEN",
	TrelloAppSecret: "TRELLO_APP_SECRET",
} as const;

/** Credentials only the agent CLIs use: given to the task, never to a function. */
export const AGENT_SECRETS = {
	AnthropicApiKey: "ANTHROPIC_API_KEY",
	GeminiApiKey: "GEMINI_API_KEY",
	OpenaiApiKey: "OPENAI_API_KEY",
	LlmApiKey: "LISA_LLM_API_KEY",
} as const;

export type SecretName = keyof typeof SECRETS;
export type AgentSecretName = keyof typeof AGENT_SECRETS;

/** What infra/agent.ts links as `AgentTask`: where and how the launcher runs a step. */
/** Where the agent task runs in AWS: what the agent link carries. */
export interface EcsTarget {
	cluster: string;
	taskDefinition: string;
	container: string;
	subnets: string[];
	securityGroups: string[];
	assignPublicIp: boolean;
	/**
	 * `spot`: first attempts run on Fargate Spot (about 70% cheaper, may be reclaimed); a retry runs
	 * on regular Fargate, so a reclaimed step is not reclaimed again.
	 */
	capacity: "fargate" | "spot";
	/** The task definition's size, for the compute cost; unknown when the variables are missing. */
	size?: { vcpu: number; memoryGb: number };
}

export type AgentLink = Omit<EcsTarget, "size"> & { vcpu?: number; memoryGb?: number };

/**
 * Package files the API serves (the dashboard's libraries, src/api/assets.ts), by their path in the
 * package: they stay out of its bundle, and infra/api.ts copies them beside it under `node_modules/`.
 */
export const API_PACKAGE_FILES = {
	uplotJs: "uplot/dist/uPlot.iife.min.js",
	uplotCss: "uplot/dist/uPlot.min.css",
	preact: "preact/dist/preact.mjs",
	htm: "htm/dist/htm.mjs",
} as const;

/**
 * The dashboard's ES modules, its entry first: src/dashboard's and the domain's it shares with the
 * server. src/api/assets.ts serves each as it is (no build step) and infra/api.ts copies each beside
 * the API's bundle: every module the page loads, and only those (src/api/assets.test.ts follows the
 * imports from the entry).
 */
export const DASHBOARD_MODULES = [
	"src/dashboard/main.js",
	"src/dashboard/api.js",
	"src/dashboard/sign-in.js",
	"src/dashboard/view.js",
	"src/dashboard/wall.js",
	"src/dashboard/html.js",
	"src/dashboard/format.js",
	"src/dashboard/parts.js",
	"src/dashboard/doing.js",
	"src/dashboard/stats.js",
	"src/dashboard/charts.js",
	"src/dashboard/runs-list.js",
	"src/dashboard/stream.js",
	"src/dashboard/run-page.js",
	"src/dashboard/run-actions.js",
	"src/dashboard/run-links.js",
	"src/dashboard/run-steps.js",
	"src/dashboard/run-events.js",
	"src/dashboard/epic.js",
	"src/domain/step-label.js",
] as const;

/**
 * What the API reads from disk rather than from its bundle, as paths from the repository's root:
 * the deploy copies each to the same path beside the bundle (infra/api.ts), where the API finds it
 * as it does in the sources (src/api/assets.ts).
 */
export const API_FILES: readonly string[] = [
	...Object.values(API_PACKAGE_FILES).map((file) => `node_modules/${file}`),
	...DASHBOARD_MODULES,
];

const AGENT_CPUS = [
	"0.25 vCPU",
	"0.5 vCPU",
	"1 vCPU",
	"2 vCPU",
	"4 vCPU",
	"8 vCPU",
	"16 vCPU",
] as const;
export type AgentCpu = (typeof AGENT_CPUS)[number];

/** One of `allowed`, else `def` when unset; throws naming the variable and the choices. */
export function pick<T extends string>(
	name: string,
	value: string | undefined,
	allowed: readonly T[],
	def: T,
): T {
	const v = value?.trim() || def;
	if (!(allowed as readonly string[]).includes(v))
		throw new Error(`${name}="${v}" is not supported: use one of ${allowed.join(", ")}`);
	return v as T;
}

export function gigabytes(
	name: string,
	value: string | undefined,
	def: `${number} GB`,
): `${number} GB` {
	const v = value?.trim() || def;
	if (!/^\d+(\.\d+)? GB$/.test(v)) throw new Error(`${name}="${v}" must look like "4 GB"`);
	return v as `${number} GB`;
}

/**
 * The agent task's size (LISA_AGENT_CPU, LISA_AGENT_MEMORY): what `sst deploy` registers for the
 * Fargate task and the limits of the local container launcher.
 */
export function agentTaskSize(env: NodeJS.ProcessEnv): { cpu: AgentCpu; memory: `${number} GB` } {
	return {
		cpu: pick("LISA_AGENT_CPU", env.LISA_AGENT_CPU, AGENT_CPUS, "2 vCPU"),
		memory: gigabytes("LISA_AGENT_MEMORY", env.LISA_AGENT_MEMORY, "4 GB"),
	};
}
