import * as z from "zod";
import { codeHost, HOST_PATTERN } from "../../domain/egress";
import type { LaunchRepo } from "../../launcher/launcher";
import { StepFailure } from "../report/failure";

// The repositories the launch handed the task (`LISA_REPOS`). They, not the run in the store,
// decide where the code host token goes: a task reads the run, and an agent that could write
// the run must not choose where the next attempt sends the token (docs/security.md › Security).

const launchReposSchema = z.array(
	z.object({
		name: z.string().min(1),
		url: z.string().min(1),
		slug: z
			.string()
			.regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/)
			.optional(),
		allow: z.array(z.string().regex(HOST_PATTERN)).optional(),
	}),
);

/**
 * The launch's repositories; an http(s) one must be on the code host, since commands that talk to
 * it carry the token.
 */
export function launchedRepos(env: NodeJS.ProcessEnv): LaunchRepo[] {
	let repos: LaunchRepo[];
	let host: string;
	try {
		repos = launchReposSchema.parse(JSON.parse(env.LISA_REPOS ?? ""));
		host = codeHost(env.GITHUB_API_URL);
	} catch {
		throw new StepFailure(
			"the task was launched without its repositories (LISA_REPOS) or with an invalid GITHUB_API_URL",
			false,
			"config",
		);
	}
	for (const r of repos) {
		let url: URL | undefined;
		try {
			url = new URL(r.url);
		} catch {}
		if ((url?.protocol === "https:" || url?.protocol === "http:") && url.hostname !== host)
			throw new StepFailure(
				`repo "${r.name}" is at ${url.hostname}, but Lisa sends GITHUB_TOKEN only to the code host ${host} (GITHUB_API_URL): use a repository there`,
				false,
				"config",
			);
	}
	return repos;
}

/** The launched repository of that name. */
export function launchedRepo(repos: readonly LaunchRepo[], name: string): LaunchRepo {
	const repo = repos.find((r) => r.name === name);
	if (!repo)
		throw new StepFailure(`the task was not launched with repo "${name}"`, false, "config");
	return repo;
}
