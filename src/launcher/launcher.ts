import { PROVIDER_ENV } from "../config/provider-env";
import type { Settings } from "../config/settings";
import { type Run, readsAllRepos } from "../domain/run";

// The launcher port: ECS RunTask in AWS, a child process locally. Both give the task the same env.

/** Where a step's repository is: what the task sends the code host token to, and nothing else. */
export interface LaunchRepo {
	name: string;
	url: string;
	slug?: string;
	/** The hosts its agent may reach besides the code host (`network.allow`). */
	allow?: string[];
}

export interface LaunchRequest {
	runId: string;
	stepIndex: number;
	attempt: number;
	/** The step's repository, or every configured one for a step that reads them all (a plan, an epic's phases). */
	repos: LaunchRepo[];
	/** With a GitHub App: the nonce that names the attempt's minted token in the store (`LISA_STEP_TOKEN`). */
	stepToken?: string;
}

/**
 * The repositories a step's task works in, from the run's config snapshot (written by intake from
 * the config file): handed to the task at launch, so nothing the task later reads decides where
 * its token goes.
 */
export function launchRepos(run: Run, stepIndex: number): LaunchRepo[] {
	const step = run.steps[stepIndex];
	const repos = run.config?.repos ?? [];
	const picked = step && readsAllRepos(step) ? repos : repos.filter((r) => r.name === step?.repo);
	return picked.map((r) => ({
		name: r.name,
		url: r.url,
		...(r.slug ? { slug: r.slug } : {}),
		...(r.network.allow.length ? { allow: r.network.allow } : {}),
	}));
}

/** What a launcher can tell about a task, from one look at it. */
export interface TaskStatus {
	/** false when the task is known to be gone; undefined when the launcher cannot tell. */
	alive?: boolean;
	/** Why a stopped task stopped (exit code, OOM, reclaimed…), when the launcher can tell. */
	stopReason?: string;
}

export interface Launcher {
	launch(req: LaunchRequest): Promise<{ taskId: string }>;
	/** `reason` is recorded where the launcher can (ECS shows it as the task's stopped reason). */
	stop(taskId: string, reason?: string): Promise<void>;
	inspect(taskId: string): Promise<TaskStatus>;
}

/**
 * The task's environment contract (docs/agent-task.md › The agent task): which step to run and
 * where the store and queue are.
 */
export function taskEnvironment(req: LaunchRequest, settings: Settings): Record<string, string> {
	const env: Record<string, string> = {
		LISA_RUN_ID: req.runId,
		LISA_STEP_INDEX: String(req.stepIndex),
		LISA_ATTEMPT: String(req.attempt),
		LISA_TABLE_NAME: settings.tableName,
		LISA_EVENTS_QUEUE_URL: settings.eventsQueueUrl,
		AWS_REGION: settings.region,
		LISA_REPOS: JSON.stringify(req.repos),
	};
	if (settings.dynamoEndpoint) env.LISA_DYNAMODB_ENDPOINT = settings.dynamoEndpoint;
	if (settings.sqsEndpoint) env.LISA_SQS_ENDPOINT = settings.sqsEndpoint;
	if (settings.localAccessKey) env.LISA_LOCAL_AWS_KEY = settings.localAccessKey;
	if (settings.github.apiUrl) env.GITHUB_API_URL = settings.github.apiUrl;
	// The pipeline minted the attempt's token (a GitHub App's): the store keeps it under this nonce.
	if (req.stepToken) env.LISA_STEP_TOKEN = req.stepToken;
	return env;
}

/** What a task may inherit from its launcher's environment: agent credentials, the code host, locale. */
const TASK_ENV_ALLOW = [
	/^(PATH|HOME|USER|LOGNAME|LANG|LC_ALL|LC_CTYPE|TZ|TMPDIR|SHELL|TERM|LOG_LEVEL)$/,
	/^GITHUB_(TOKEN|API_URL)$/,
	/^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL)$/,
	...Object.values(PROVIDER_ENV).flat(),
	/^AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED$/,
];

/** With a GitHub App, GITHUB_TOKEN stays in the launcher: each attempt gets a token minted for it. */
export function inheritedTaskEnv(env: NodeJS.ProcessEnv): Record<string, string> {
	const app = Boolean(env.GITHUB_APP_ID?.trim());
	return Object.fromEntries(
		Object.entries(env).filter(
			(e): e is [string, string] =>
				e[1] !== undefined &&
				TASK_ENV_ALLOW.some((re) => re.test(e[0])) &&
				!(app && e[0] === "GITHUB_TOKEN"),
		),
	);
}
