import { existsSync } from "node:fs";
import { type AgentCpu, agentTaskSize, gigabytes, pick } from "../src/config/links";

// Sizing and deploy-time choices of the AWS stage. Plain data without SST globals, so tests check it
// and infra/*.ts reads it. The choices come from the environment of `sst deploy` (or `.env`).

export const LAMBDA_RUNTIME = "nodejs22.x";

/** Each function's timeout and memory; queue consumers also their batch size. */
export const FUNCTIONS = {
	// Splitting: what the API imports dynamically (the AWS SDK's other credential providers, a
	// GitHub App's JWT library) stays out of its cold start (npm run bench:bundle).
	api: { timeoutSeconds: 20, memoryMb: 1024, splitting: true },
	intake: { timeoutSeconds: 60, memoryMb: 512, batchSize: 5 },
	events: { timeoutSeconds: 60, memoryMb: 512, batchSize: 10 },
	ecsEvents: { timeoutSeconds: 60, memoryMb: 512 },
	sweeper: { timeoutSeconds: 120, memoryMb: 512 },
} as const;

/** Often enough to notice a silent task within the sweeper's two-minute heartbeat limit. */
export const SWEEP_SCHEDULE = "rate(1 minute)";

export { REDRIVE as QUEUES } from "../src/queue/redrive";

/**
 * A queue's visibility timeout for a consumer with this timeout: AWS's rule of six times the
 * function timeout, so a message is never redelivered while a (throttled, retried) batch still runs.
 */
export const visibilityTimeoutSeconds = (consumerTimeoutSeconds: number) =>
	6 * consumerTimeoutSeconds;

/** Where the functions that read the Lisa config find it: copied into their bundle. */
export const BUNDLED_CONFIG = ".lisa/config.yaml";

const LOG_RETENTIONS = ["1 week", "2 weeks", "1 month", "3 months", "6 months", "1 year"] as const;
type LogRetention = (typeof LOG_RETENTIONS)[number];

export interface DeployConfig {
	/** The Lisa config (`.lisa/config.yaml`) bundled into the API and intake functions. */
	configFile: string;
	agent: {
		cpu: AgentCpu;
		memory: `${number} GB`;
		storage: `${number} GB`;
		architecture: "x86_64" | "arm64";
		/** `spot`: first attempts on Fargate Spot, retries on Fargate (see src/launcher/ecs.ts). */
		capacity: "fargate" | "spot";
		/**
		 * `allow-list`: the tasks in private subnets without a route out, reaching AWS through VPC
		 * endpoints and everything else through the egress proxy service
		 * (docs/deploying.md › The agent's egress).
		 */
		egress: "open" | "allow-list";
	};
	/** A custom domain for the API (its Route 53 zone must be in the account); else AWS's URL. */
	domain?: string;
	logRetention: LogRetention;
	logLevel: string;
	/** Browser origins allowed to call the API (comma-separated `LISA_CORS_ORIGINS`); "" for none. */
	corsOrigins: string;
	/** For the built-in agent: the OpenAI-compatible endpoint and model (the key is a secret). */
	llm: { baseUrl?: string; model?: string };
}

/** Reads the deploy-time choices; throws naming the variable and the fix. */
export function deployConfig(
	env: NodeJS.ProcessEnv,
	fileExists: (file: string) => boolean = existsSync,
): DeployConfig {
	const configFile = env.LISA_CONFIG?.trim() || BUNDLED_CONFIG;
	if (!fileExists(configFile))
		throw new Error(
			`no Lisa config at ${configFile}: copy .lisa/config.example.yaml there (or set LISA_CONFIG) before deploying; it is bundled into the functions`,
		);
	return {
		configFile,
		agent: {
			...agentTaskSize(env),
			storage: gigabytes("LISA_AGENT_STORAGE", env.LISA_AGENT_STORAGE, "30 GB"),
			architecture: pick("LISA_AGENT_ARCH", env.LISA_AGENT_ARCH, ["x86_64", "arm64"], "x86_64"),
			capacity: pick(
				"LISA_AGENT_CAPACITY",
				env.LISA_AGENT_CAPACITY,
				["fargate", "spot"],
				"fargate",
			),
			egress: pick("LISA_AGENT_EGRESS", env.LISA_AGENT_EGRESS, ["open", "allow-list"], "open"),
		},
		domain: env.LISA_DOMAIN?.trim() || undefined,
		logRetention: pick("LISA_LOG_RETENTION", env.LISA_LOG_RETENTION, LOG_RETENTIONS, "1 month"),
		logLevel: env.LOG_LEVEL?.trim() || "info",
		corsOrigins: env.LISA_CORS_ORIGINS?.trim() ?? "",
		llm: {
			baseUrl: env.LISA_LLM_BASE_URL?.trim() || undefined,
			model: env.LISA_LLM_MODEL?.trim() || undefined,
		},
	};
}

/** Stages whose data outlives `sst remove` and whose resources cannot be deleted by accident. */
export const isProduction = (stage: string | undefined) =>
	stage === "prod" || stage === "production";
