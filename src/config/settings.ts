import path from "node:path";
import { Resource } from "sst/resource";
import { DEFAULT_CONFIG_PATH } from "./default-path";
import { type AgentLink, type EcsTarget, LINK, SECRETS } from "./links";

// Runtime settings (docs/config.md › Environment). Every process reads them here and nowhere else:
// from the resources SST links to it when deployed (infra/), else from the environment. Callers
// cannot tell which.

/** A GitHub App: its id, private key (PEM) and its installation on the teams' repositories. */
export interface GitHubApp {
	appId: string;
	privateKey: string;
	installationId: number;
}

export interface Settings {
	port: number;
	configPath: string;
	dataDir: string;
	/** The admin token of /api/* (everything). */
	apiToken?: string;
	/** The read-only token of /api/* (dashboards: GET only). */
	readToken?: string;
	/** Browser origins allowed to call /api/* (CORS); `*` for any. Empty: same origin only. */
	corsOrigins: string[];
	/**
	 * Whether /api/runs/:id/stream may stay open. Lambda behind API Gateway buffers a response, so
	 * there each request answers with what is new and the browser reconnects (SSE `retry`).
	 */
	liveStream: boolean;
	publicUrl?: string;
	region: string;
	tableName: string;
	intakeQueueUrl: string;
	eventsQueueUrl: string;
	dynamoEndpoint?: string;
	sqsEndpoint?: string;
	/** The embedded services' access key (local stack only): they refuse requests without it. */
	localAccessKey?: string;
	/**
	 * local: a child process per step; container: a container of the task image
	 * (docs/agent-task.md › The container).
	 */
	launcher: "local" | "ecs" | "container";
	/** Where step tasks run in AWS; undefined when the LISA_ECS_* variables are not set. */
	ecs?: EcsTarget;
	linear: { apiKey?: string; webhookSecret?: string; apiUrl?: string };
	/**
	 * token: a personal (or any) token; app: Lisa as a GitHub App, which mints each step a token of
	 * its own (docs/trackers.md › As a GitHub App (a token per step)). botLogin: the login Lisa acts
	 * as when its token is an App's.
	 */
	github: {
		token?: string;
		app?: GitHubApp;
		webhookSecret?: string;
		apiUrl?: string;
		botLogin?: string;
	};
	trello: { apiKey?: string; token?: string; appSecret?: string; apiUrl?: string };
}

const opt = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());
const list = (v: string | undefined) =>
	(opt(v) ?? "")
		.split(",")
		.map((x) => x.trim())
		.filter(Boolean);

/** GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_INSTALLATION_ID: all three, or none. */
function githubApp(env: NodeJS.ProcessEnv): GitHubApp | undefined {
	const appId = opt(env.GITHUB_APP_ID);
	// A PEM in one line of a .env file has its line breaks written as \n.
	const privateKey = opt(env.GITHUB_APP_PRIVATE_KEY)?.replace(/\\n/g, "\n");
	const installation = opt(env.GITHUB_APP_INSTALLATION_ID);
	if (!appId && !privateKey && !installation) return undefined;
	if (!appId || !privateKey || !installation || !/^\d+$/.test(installation))
		throw new Error(
			"a GitHub App needs GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY (its private key, PEM) and GITHUB_APP_INSTALLATION_ID (the number at the end of the installation's settings URL); set all three, or none to use GITHUB_TOKEN",
		);
	return { appId, privateKey, installationId: Number(installation) };
}

function ecsTarget(env: NodeJS.ProcessEnv): EcsTarget | undefined {
	const cluster = opt(env.LISA_ECS_CLUSTER);
	const taskDefinition = opt(env.LISA_ECS_TASK_DEFINITION);
	if (!cluster || !taskDefinition) return undefined;
	return {
		cluster,
		taskDefinition,
		container: opt(env.LISA_ECS_CONTAINER) ?? "agent",
		subnets: list(env.LISA_ECS_SUBNETS),
		securityGroups: list(env.LISA_ECS_SECURITY_GROUPS),
		assignPublicIp: env.LISA_ECS_PUBLIC_IP !== "false",
		capacity: env.LISA_ECS_CAPACITY === "spot" ? "spot" : "fargate",
		...taskSize(env),
	};
}

/** LISA_ECS_VCPU and LISA_ECS_MEMORY_GB: the agent task's size, priced as compute. */
function taskSize(env: NodeJS.ProcessEnv): Pick<EcsTarget, "size"> {
	const vcpu = Number(opt(env.LISA_ECS_VCPU));
	const memoryGb = Number(opt(env.LISA_ECS_MEMORY_GB));
	return vcpu > 0 && memoryGb > 0 ? { size: { vcpu, memoryGb } } : {};
}

function launcherOf(value: string | undefined): Settings["launcher"] {
	const v = opt(value) ?? "local";
	if (v === "local" || v === "ecs" || v === "container") return v;
	throw new Error(`LISA_LAUNCHER must be "local", "container" or "ecs", not "${value}"`);
}

type Linked = Record<string, unknown>;

/** `SST_RESOURCE_<Name>` variables, as SST writes them for a linked container or an injected env. */
function linkedFromEnv(env: NodeJS.ProcessEnv): Linked {
	const out: Linked = {};
	for (const [k, v] of Object.entries(env))
		if (k.startsWith("SST_RESOURCE_") && v) out[k.slice("SST_RESOURCE_".length)] = JSON.parse(v);
	return out;
}

/**
 * What SST links to this process. For the real environment that is SST's `Resource`, which also
 * decrypts a Lambda function's bundled links (`SST_KEY_FILE`); an injected environment (tests, the
 * local stack) carries its links only as variables.
 */
function linkedResources(env: NodeJS.ProcessEnv): Linked {
	if (env !== process.env) return linkedFromEnv(env);
	return "App" in Resource ? { ...(Resource as unknown as Linked) } : {};
}

const prop = (linked: Linked, name: string, key: string): unknown =>
	(linked[name] as Record<string, unknown> | undefined)?.[key];

/**
 * The environment with every linked resource written in as the variable it stands for. A linked
 * value wins over the environment (it is the deployment's truth); an empty one means "not set".
 */
export function withLinks(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
	const linked = linkedResources(env);
	const vars: Record<string, unknown> = {
		LISA_TABLE_NAME: prop(linked, LINK.table, "name"),
		LISA_INTAKE_QUEUE_URL: prop(linked, LINK.intakeQueue, "url"),
		LISA_EVENTS_QUEUE_URL: prop(linked, LINK.eventsQueue, "url"),
	};
	for (const [name, variable] of Object.entries(SECRETS))
		vars[variable] = prop(linked, name, "value");
	const agent = linked[LINK.agent] as AgentLink | undefined;
	if (agent)
		Object.assign(vars, {
			LISA_LAUNCHER: "ecs",
			LISA_ECS_CLUSTER: agent.cluster,
			LISA_ECS_TASK_DEFINITION: agent.taskDefinition,
			LISA_ECS_CONTAINER: agent.container,
			LISA_ECS_SUBNETS: agent.subnets?.join(","),
			LISA_ECS_SECURITY_GROUPS: agent.securityGroups?.join(","),
			LISA_ECS_PUBLIC_IP:
				agent.assignPublicIp === undefined ? undefined : String(agent.assignPublicIp),
			LISA_ECS_CAPACITY: agent.capacity,
			LISA_ECS_VCPU: agent.vcpu === undefined ? undefined : String(agent.vcpu),
			LISA_ECS_MEMORY_GB: agent.memoryGb === undefined ? undefined : String(agent.memoryGb),
		});
	const out: NodeJS.ProcessEnv = { ...env };
	for (const [k, v] of Object.entries(vars)) if (typeof v === "string" && v !== "") out[k] = v;
	return out;
}

export function readSettings(input: NodeJS.ProcessEnv = process.env): Settings {
	const env = withLinks(input);
	const port = Number(opt(env.PORT) ?? 8787);
	if (!Number.isInteger(port) || port < 0 || port > 65535)
		throw new Error(`PORT must be a port number, got "${env.PORT}"`);
	return {
		port,
		configPath: opt(env.LISA_CONFIG) ?? DEFAULT_CONFIG_PATH,
		dataDir: path.resolve(opt(env.LISA_DATA_DIR) ?? ".lisa/local"),
		apiToken: opt(env.LISA_API_TOKEN),
		readToken: opt(env.LISA_READ_TOKEN),
		corsOrigins: list(env.LISA_CORS_ORIGINS),
		liveStream: !opt(env.AWS_LAMBDA_FUNCTION_NAME),
		publicUrl: opt(env.LISA_PUBLIC_URL)?.replace(/\/+$/, ""),
		region: opt(env.AWS_REGION) ?? opt(env.AWS_DEFAULT_REGION) ?? "us-east-1",
		tableName: opt(env.LISA_TABLE_NAME) ?? "lisa",
		intakeQueueUrl: opt(env.LISA_INTAKE_QUEUE_URL) ?? "",
		eventsQueueUrl: opt(env.LISA_EVENTS_QUEUE_URL) ?? "",
		dynamoEndpoint: opt(env.LISA_DYNAMODB_ENDPOINT),
		sqsEndpoint: opt(env.LISA_SQS_ENDPOINT),
		localAccessKey: opt(env.LISA_LOCAL_AWS_KEY),
		launcher: launcherOf(env.LISA_LAUNCHER),
		ecs: ecsTarget(env),
		linear: {
			apiKey: opt(env.LINEAR_API_KEY),
			webhookSecret: opt(env.LINEAR_WEBHOOK_SECRET),
			apiUrl: opt(env.LINEAR_API_URL),
		},
		github: {
			token: opt(env.GITHUB_TOKEN),
			app: githubApp(env),
			webhookSecret: opt(env.GITHUB_WEBHOOK_SECRET),
			apiUrl: opt(env.GITHUB_API_URL)?.replace(/\/+$/, ""),
			botLogin: opt(env.GITHUB_BOT_LOGIN),
		},
		trello: {
			apiKey: opt(env.TRELLO_API_KEY),
			token: opt(env.TRELLO_TOKEN),
			appSecret: opt(env.TRELLO_APP_SECRET),
			apiUrl: opt(env.TRELLO_API_URL),
		},
	};
}
