import { execFile } from "node:child_process";
import { LinearError, LinearErrorType } from "@linear/sdk";
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "octokit";
import { loadConfig } from "../config/load";
import type { LisaConfig } from "../config/schema";
import type { Settings } from "../config/settings";
import { statusOf } from "../integrations/github/refs";
import { linearClient } from "../integrations/linear/client";
import { TRELLO_API_URL } from "../integrations/trello/http";
import { agentReach } from "../local/agent-reach";
import { agentUidRange } from "../local/agent-users";
import { agentChecksAs } from "./agent-checks";
import {
	type Check,
	configCheck,
	formatChecks,
	GITHUB_TOKEN_MISSING,
	LINEAR_API_KEY_MISSING,
	TRELLO_CREDENTIALS_MISSING,
} from "./doctor";

// `lisa doctor`: each check touches the real thing (a process, a tracker, GitHub, Lisa's API) once,
// within a few seconds, and says how to fix what fails.

const TIMEOUT_MS = 5_000;

class TimedOut extends Error {}

async function within<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
	const controller = new AbortController();
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>((_, reject) => {
		timer = setTimeout(() => {
			controller.abort();
			reject(new TimedOut());
		}, ms);
	});
	try {
		return await Promise.race([work(controller.signal), timeout]);
	} finally {
		clearTimeout(timer);
	}
}

const timedOut = (what: string, where: string): Check => ({
	ok: false,
	label: `${what} did not answer within ${TIMEOUT_MS / 1000} s (${where})`,
	hint: "check the network and the *_API_URL override, then run `npx lisa doctor` again",
});

const reason = (err: unknown) => {
	const e = err as Error & { cause?: { code?: string; message?: string } };
	return e.cause?.code ?? e.cause?.message ?? e.message;
};

function gitCheck(env: NodeJS.ProcessEnv): Promise<Check> {
	return new Promise((resolve) => {
		execFile("git", ["--version"], { env, timeout: TIMEOUT_MS }, (err, stdout) =>
			resolve(
				err
					? {
							ok: false,
							label: `git is not available (${reason(err)})`,
							hint: "install git (https://git-scm.com/downloads) and put it on PATH",
						}
					: { ok: true, label: stdout.trim() },
			),
		);
	});
}

async function linearCheck(settings: Settings): Promise<Check> {
	const { apiKey, apiUrl } = settings.linear;
	const where = apiUrl ?? "api.linear.app";
	if (!apiKey)
		return {
			ok: false,
			label: LINEAR_API_KEY_MISSING,
			hint: "create a personal API key in Linear › Settings › API and export LINEAR_API_KEY",
		};
	try {
		const viewer = await within(TIMEOUT_MS, () => linearClient(apiKey, apiUrl).viewer);
		return { ok: true, label: `Linear (${where}): signed in as ${viewer.name}` };
	} catch (err) {
		if (err instanceof TimedOut) return timedOut("Linear", where);
		if (err instanceof LinearError && err.type === LinearErrorType.AuthenticationError)
			return {
				ok: false,
				label: `Linear (${where}) refused LINEAR_API_KEY`,
				hint: "create a new personal API key in Linear › Settings › API and export LINEAR_API_KEY",
			};
		return {
			ok: false,
			label: `Linear (${where}) is not reachable: ${reason(err)}`,
			hint: "check the network, and LINEAR_API_URL if you set it",
		};
	}
}

async function trelloCheck(settings: Settings): Promise<Check> {
	const { apiKey, token, apiUrl } = settings.trello;
	const base = (apiUrl ?? TRELLO_API_URL).replace(/\/+$/, "");
	if (!apiKey || !token)
		return {
			ok: false,
			label: TRELLO_CREDENTIALS_MISSING,
			hint: "get the key at https://trello.com/power-ups/admin and a member token for it",
		};
	const url = new URL(`${base}/members/me`);
	url.search = new URLSearchParams({ key: apiKey, token, fields: "username" }).toString();
	try {
		const res = await within(TIMEOUT_MS, (signal) => fetch(url, { signal }));
		if (res.ok) {
			const me = (await res.json()) as { username?: string };
			return { ok: true, label: `Trello (${base}): signed in as ${me.username ?? "?"}` };
		}
		return {
			ok: false,
			label: `Trello (${base}) refused TRELLO_API_KEY/TRELLO_TOKEN (${res.status} ${(await res.text()).trim()})`,
			hint: "check TRELLO_API_KEY, and authorise a new TRELLO_TOKEN for that key",
		};
	} catch (err) {
		if (err instanceof TimedOut) return timedOut("Trello", base);
		return {
			ok: false,
			label: `Trello (${base}) is not reachable: ${reason(err)}`,
			hint: "check the network, and TRELLO_API_URL if you set it",
		};
	}
}

/** octokit as Lisa (its App's installation, or its token); `asApp`: as the App itself (its JWT). */
function octokit(settings: Settings, asApp = false): Octokit {
	const quiet = () => {};
	const { app, token } = settings.github;
	return new Octokit({
		...(app
			? {
					authStrategy: createAppAuth,
					auth: asApp ? { appId: app.appId, privateKey: app.privateKey } : { ...app },
				}
			: { auth: token }),
		...(settings.github.apiUrl ? { baseUrl: settings.github.apiUrl } : {}),
		log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
		retry: { enabled: false },
		throttle: { enabled: false },
	});
}

/** The status GitHub answered, or undefined when nothing answered (octokit reports that as 500). */
const answered = (err: unknown) =>
	(err as { response?: unknown }).response === undefined ? undefined : statusOf(err);

/** GitHub with GITHUB_TOKEN: `GET /user` (a GitHub App's token answers 403 there: reachable). */
async function githubCheck(settings: Settings, what: string): Promise<Check> {
	const where = settings.github.apiUrl ?? "api.github.com";
	if (settings.github.app) return githubAppCheck(settings, what, where);
	if (!settings.github.token)
		return {
			ok: false,
			label: GITHUB_TOKEN_MISSING,
			hint: "create a token that can push and open pull requests on the repos, export GITHUB_TOKEN",
		};
	try {
		const { data } = await within(TIMEOUT_MS, (signal) =>
			octokit(settings).request("GET /user", { request: { signal } }),
		);
		return { ok: true, label: `${what} (${where}): signed in as ${data.login}` };
	} catch (err) {
		if (err instanceof TimedOut) return timedOut(what, where);
		const status = answered(err);
		if (status === 403)
			return { ok: true, label: `${what} (${where}): reachable with a GitHub App token` };
		if (status === 401)
			return {
				ok: false,
				label: `${what} (${where}) refused GITHUB_TOKEN`,
				hint: "create a new token and export GITHUB_TOKEN",
			};
		return {
			ok: false,
			label:
				status === undefined
					? `${what} (${where}) is not reachable: ${(err as Error).message}`
					: `${what} (${where}) answered ${status}: ${(err as Error).message}`,
			hint: "check the network, and GITHUB_API_URL if you set it",
		};
	}
}

/** A step token ends an hour after it is minted: a step allowed longer could not push. */
const TOKEN_MINUTES = 60;

function appTokenCheck(config: LisaConfig): Check {
	const minutes = config.limits.step_timeout_minutes;
	return minutes <= TOKEN_MINUTES
		? { ok: true, label: `GitHub App: a step's token outlasts its ${minutes} min limit` }
		: {
				ok: false,
				label: `GitHub App: steps may take ${minutes} min, but a step's token ends after ${TOKEN_MINUTES}: a longer step cannot push`,
				hint: `set limits.step_timeout_minutes to ${TOKEN_MINUTES} or less`,
			};
}

/** GitHub as the App: `GET /app` with its JWT, which its id and private key sign. */
async function githubAppCheck(settings: Settings, what: string, where: string): Promise<Check> {
	try {
		const { data } = await within(TIMEOUT_MS, (signal) =>
			octokit(settings, true).request("GET /app", { request: { signal } }),
		);
		return { ok: true, label: `${what} (${where}): signed in as the GitHub App ${data?.slug}` };
	} catch (err) {
		if (err instanceof TimedOut) return timedOut(what, where);
		const status = answered(err);
		return {
			ok: false,
			label:
				status === undefined
					? `${what} (${where}) is not reachable: ${(err as Error).message}`
					: `${what} (${where}) refused the GitHub App (${status}): ${(err as Error).message}`,
			hint:
				status === undefined
					? "check the network, and GITHUB_API_URL if you set it"
					: "check GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY (the App's private key, PEM)",
		};
	}
}

/** Each configured repo's slug is visible to GITHUB_TOKEN, and whether the token can push. */
async function repoCheck(settings: Settings, repo: LisaConfig["repos"][number]): Promise<Check> {
	if (!repo.slug && settings.github.app)
		return {
			ok: false,
			label: `repo ${repo.name}: no slug, so the GitHub App cannot mint a token for its steps`,
			hint: `set \`slug: owner/name\` of repo ${repo.name}, a repository the App is installed on`,
		};
	if (!repo.slug)
		return { ok: "skip", label: `repo ${repo.name}: no slug (not on GitHub): no pull requests` };
	const [owner = "", name = ""] = repo.slug.split("/");
	try {
		const { data } = await within(TIMEOUT_MS, (signal) =>
			octokit(settings).request("GET /repos/{owner}/{repo}", {
				owner,
				repo: name,
				request: { signal },
			}),
		);
		const push = data.permissions?.push;
		if (push === false)
			return {
				ok: false,
				label: `repo ${repo.name} (${repo.slug}): visible, but GITHUB_TOKEN cannot push`,
				hint: `give the token write access to ${repo.slug} (contents and pull requests)`,
			};
		return {
			ok: true,
			label: `repo ${repo.name} (${repo.slug}): visible, ${push ? "can push" : "push access unknown"}`,
		};
	} catch (err) {
		if (err instanceof TimedOut) return timedOut(`GitHub (${repo.slug})`, repo.slug);
		const status = answered(err);
		const why =
			status === 404
				? `not found, or not visible to ${settings.github.app ? "the GitHub App's installation" : "GITHUB_TOKEN"}`
				: status === undefined
					? `GitHub is not reachable: ${(err as Error).message}`
					: `GitHub answered ${status}`;
		return {
			ok: false,
			label: `repo ${repo.name} (${repo.slug}): ${why}`,
			hint: settings.github.app
				? `check \`slug\` of repo ${repo.name} and install the App on ${repo.slug}`
				: `check \`slug\` of repo ${repo.name} and that the token has access to ${repo.slug}`,
		};
	}
}

async function apiCheck(url: string): Promise<Check> {
	try {
		const res = await within(TIMEOUT_MS, (signal) => fetch(`${url}/healthz`, { signal }));
		if (res.ok) return { ok: true, label: `Lisa at ${url}: /healthz answers ${res.status}` };
		return {
			ok: false,
			label: `Lisa at ${url}: /healthz answered ${res.status}`,
			hint: "is that Lisa? check --url / LISA_URL",
		};
	} catch (err) {
		if (err instanceof TimedOut) return timedOut("Lisa", url);
		return {
			ok: false,
			label: `no Lisa at ${url} (${reason(err)})`,
			hint: "start one with `npm start` or pass --url",
		};
	}
}

export interface DoctorOptions {
	settings: Settings;
	env: NodeJS.ProcessEnv;
	/** Lisa's URL to check, when one was given. */
	url?: string;
}

/** The agents' checks, made as `npm start` would run them: the same PATH and, as root, an agent uid. */
async function agents(
	config: LisaConfig,
	settings: Settings,
	env: NodeJS.ProcessEnv,
): Promise<Check[]> {
	try {
		const range = agentUidRange(env.LISA_AGENT_UIDS);
		const reach = await agentReach({
			dataDir: settings.dataDir,
			otherUids: range !== undefined,
			pathVar: env.PATH,
		});
		return await agentChecksAs(range, config, env, reach.path);
	} catch (err) {
		// A bad LISA_AGENT_UIDS, a shared folder that cannot be made: what `npm start` would refuse.
		return [{ ok: false, label: (err as Error).message }];
	}
}

async function doctorChecks(opts: DoctorOptions): Promise<Check[]> {
	const { settings, env } = opts;
	const state = loadConfig(settings.configPath);
	const config = state.status === "ok" ? state.config : undefined;
	const skipped = (what: string): Check => ({ ok: "skip", label: `${what}: needs a valid config` });
	const tracker = (c: LisaConfig) =>
		c.source === "linear"
			? linearCheck(settings)
			: c.source === "trello"
				? trelloCheck(settings)
				: githubCheck(settings, "GitHub Issues");
	const [first, agentsChecked, rest] = await Promise.all([
		Promise.all([configCheck(state), gitCheck(env)]),
		config ? agents(config, settings, env) : [skipped("agent CLIs")],
		Promise.all([
			config ? tracker(config) : skipped("tracker"),
			...(config?.source === "github" ? [] : [githubCheck(settings, "GitHub")]),
			...(config && (settings.github.token || settings.github.app)
				? config.repos.map((r) => repoCheck(settings, r))
				: []),
			...(config && settings.github.app ? [appTokenCheck(config)] : []),
			...(opts.url ? [apiCheck(opts.url)] : []),
		]),
	]);
	return [...first, ...agentsChecked, ...rest];
}

/** `lisa doctor`; exit 1 when any check failed. */
export async function doctorCommand(
	opts: DoctorOptions,
	print: (line: string) => void,
): Promise<number> {
	const checks = await doctorChecks(opts);
	for (const line of formatChecks(checks)) print(line);
	const failed = checks.filter((c) => c.ok === false).length;
	print(failed ? `\n${failed} problem(s) found` : "\nall checks passed");
	return failed ? 1 : 0;
}
