import { closeSync, readFileSync } from "node:fs";

/**
 * The code host token: from a file descriptor when the container's entrypoint passed it that way
 * (a process's initial environment stays readable in /proc by anything running as the same user,
 * the agent included), else from GITHUB_TOKEN. Either way it leaves `env`, so nothing copies it on.
 */
export function takeGithubToken(env: NodeJS.ProcessEnv): string | undefined {
	const fd = env.LISA_GITHUB_TOKEN_FD;
	let token = env.GITHUB_TOKEN;
	if (fd) {
		token = readFileSync(Number(fd), "utf8").trim();
		closeSync(Number(fd));
	}
	delete env.GITHUB_TOKEN;
	delete env.LISA_GITHUB_TOKEN_FD;
	return token || undefined;
}
