import { closeSync, readFileSync } from "node:fs";
import { StepFailure } from "../report/failure";
import type { Attempt } from "./attempt";

/**
 * The task's secrets and the code host token. The container's entrypoint passes every secret on a
 * file descriptor (`LISA_SECRETS_FD`, one JSON object) instead of the environment, so none is in the
 * initial environment of PID 1 (readable in /proc/1/environ to a process of the same user); they
 * come back into `env` here, where the task reads them. The token then leaves `env` (it comes from
 * GITHUB_TOKEN without the entrypoint), so nothing copies it on: only git's push and the code host
 * client get it.
 */
export function takeGithubToken(env: NodeJS.ProcessEnv): string | undefined {
	const fd = env.LISA_SECRETS_FD;
	if (fd) {
		const secrets = JSON.parse(readFileSync(Number(fd), "utf8")) as Record<string, string>;
		closeSync(Number(fd));
		for (const [name, value] of Object.entries(secrets))
			if (typeof value === "string") env[name] = value;
	}
	const token = env.GITHUB_TOKEN;
	delete env.GITHUB_TOKEN;
	delete env.LISA_SECRETS_FD;
	return token || undefined;
}

/**
 * The attempt's code host token: the one the pipeline minted for it, taken from the store (no
 * other task can take it after), or else the task's GITHUB_TOKEN. A minted token is redacted as
 * every secret is.
 */
export async function attemptToken(a: Attempt): Promise<string | undefined> {
	const nonce = a.deps.env.LISA_STEP_TOKEN;
	if (!nonce) return a.deps.githubToken;
	const { runId, stepIndex, attempt } = a.req;
	const token = await a.deps.store.takeStepToken({ runId, stepIndex, attempt, nonce }, Date.now());
	if (!token)
		throw new StepFailure(
			"the step's GitHub token was not in the store: another task took it, or it expired before this one started",
			true,
			"config",
		);
	a.deps.secrets.push(token);
	return token;
}
