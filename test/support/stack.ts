import path from "node:path";
import { createApp } from "../../src/api/app";
import type { SourceName } from "../../src/config/schema";
import type { Settings } from "../../src/config/settings";
import { isTerminalRun, type RunStatus } from "../../src/domain/states";
import { type LocalStack, startLocalStack } from "../../src/local/stack";
import { createLogger } from "../../src/log";
import type { GitHubPull } from "../doubles/github/server";
import { githubHeaders, issuesEvent } from "../doubles/github/webhook";
import type { DoubleIssue } from "../doubles/linear/server";
import { issueWebhook, linearHeaders } from "../doubles/linear/webhook";
import {
	type ApiRun,
	type ConfigOptions,
	createWorld,
	GITHUB_WEBHOOK_SECRET,
	WEBHOOK_SECRET,
	type World,
} from "./world";

// The whole local stack (`lisa start`) against every double: the base world with all its trackers,
// the fake agents and bare repositories, and the stack in this process or in another one.

export interface StackOptions {
	/** The tracker the generated config uses (default linear). */
	source?: SourceName;
	/** Extra YAML appended to the generated config. */
	configExtra?: string;
	/** Every repository's `network.allow` and `setup` in the generated config. */
	allow?: readonly string[];
	setup?: readonly string[];
	/** More repositories beside `api` (bare repos, on the GitHub double as acme/<name>, in the config). */
	moreRepos?: string[];
	/** Replace the generated config entirely. */
	config?: ConfigOptions["text"];
	/** `api` over authenticated HTTP (the git host double). */
	gitHttp?: boolean;
	/** Lisa as a GitHub App on the double (WorldOptions.githubApp). */
	githubApp?: boolean;
	env?: Record<string, string | undefined>;
	/** Start the stack in-process (default) or leave it to the test. */
	startStack?: boolean;
}

/** GitHub Issues as the tracker of `acme/api`, following merges (`merged: merged`), one attempt. */
export const GITHUB_FOLLOWING_MERGES: NonNullable<StackOptions["config"]> = ({
	repo,
}) => `source: github
source_config: {team: acme/api, label: lisa, pick_from: open, in_progress: in progress, done: in review, merged: merged}
provider: claude
limits: {max_attempts: 1}
repos:
  - name: api
    url: ${repo.url}
    slug: acme/api
`;

const parts = (opts: StackOptions) =>
	({
		name: "e2e",
		repos: ["api", ...(opts.moreRepos ?? [])],
		gitHttp: opts.gitHttp,
		githubApp: opts.githubApp,
		linear: true,
		github: true,
		trello: true,
		agents: true,
		config: {
			source: opts.source,
			extra: `provider: claude\n${opts.configExtra ?? ""}`,
			allow: opts.allow,
			setup: opts.setup,
			text: opts.config,
		},
	}) as const;

export interface StackWorld extends World<ReturnType<typeof parts>> {
	stack?: LocalStack;
	/** Point the helpers at a stack running in another process. */
	attach(url: string, token: string): void;
	/**
	 * The in-process stack's app built again with some of its tracker settings changed (merged into
	 * each one: `{ github: { webhookSecret: undefined } }`); the stack itself keeps its own.
	 */
	appWith(patch: SettingsPatch): ReturnType<typeof createApp>;
	/** POSTs a raw body to a path of the stack. */
	post(p: string, body: string, headers: Record<string, string>): Promise<Response>;
	/** POSTs a GitHub delivery of `event`, signed with the world's secret; returns the response. */
	sendGitHub(event: string, payload: unknown, deliveryId?: string): Promise<Response>;
	/** POSTs a signed Issue webhook; returns the response. */
	sendWebhook(body: string, headers?: Record<string, string>): Promise<Response>;
	createdWebhook(issue: DoubleIssue): string;
	/** Files an issue labelled for Lisa through its signed `create` webhook; the run id Lisa answered. */
	startRun(title: string, description?: string): Promise<string>;
	api<T = unknown>(p: string, init?: RequestInit): Promise<{ status: number; body: T }>;
	waitForRun(id: string, done?: (run: ApiRun) => boolean, timeoutMs?: number): Promise<ApiRun>;
	url(): string;
}

type SettingsPatch = Partial<Omit<Settings, "linear" | "github" | "trello">> & {
	[K in "linear" | "github" | "trello"]?: Partial<Settings[K]>;
};

/** The local stack (in this process unless `startStack: false`), every double, bare repos. */
export async function createStackWorld(opts: StackOptions = {}): Promise<StackWorld> {
	const base = await createWorld(parts(opts));
	const env: NodeJS.ProcessEnv = Object.assign(base.env, {
		PORT: "0",
		LISA_DATA_DIR: path.join(base.dir, "data"),
		AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
		...opts.env,
	});
	const log = createLogger("lisa-test", env);
	const stack =
		opts.startStack === false
			? undefined
			: await startLocalStack({ env, log, sweepIntervalMs: 1000 }).catch(async (err) => {
					await base.stop();
					throw err;
				});
	if (stack) base.onStop(() => stack.stop());

	let target = stack ? { url: stack.url, token: stack.apiToken } : undefined;
	const world: StackWorld = {
		...base,
		stack,
		attach: (url, token) => {
			target = { url, token };
		},
		appWith: (patch) => {
			if (!stack) throw new Error("no stack");
			const { linear, github, trello } = stack.settings;
			return createApp({
				...stack.deps,
				settings: {
					...stack.settings,
					...patch,
					linear: { ...linear, ...patch.linear },
					github: { ...github, ...patch.github },
					trello: { ...trello, ...patch.trello },
				},
			});
		},
		url: () => {
			if (!target) throw new Error("no stack to talk to: start one or attach()");
			return target.url;
		},
		createdWebhook: (issue) =>
			JSON.stringify(issueWebhook({ action: "create", issue, double: base.linear })),
		startRun: async (title, description = "") => {
			const res = await world.sendWebhook(world.createdWebhook(base.issue(title, description)));
			const body = (await res.json()) as { runId?: string };
			if (res.status !== 202 || !body.runId)
				throw new Error(`the webhook was answered ${res.status}: ${JSON.stringify(body)}`);
			return body.runId;
		},
		post: (p, body, headers) => fetch(`${world.url()}${p}`, { method: "POST", body, headers }),
		sendGitHub: (event, payload, deliveryId) => {
			const body = JSON.stringify(payload);
			return world.post(
				"/webhooks/github",
				body,
				githubHeaders(body, GITHUB_WEBHOOK_SECRET, event, deliveryId),
			);
		},
		sendWebhook: (body, headers) =>
			fetch(`${world.url()}/webhooks/linear`, {
				method: "POST",
				body,
				headers: headers ?? linearHeaders(body, WEBHOOK_SECRET),
			}),
		async api(p, init = {}) {
			const res = await fetch(`${world.url()}${p}`, {
				...init,
				headers: {
					authorization: `Bearer ${target?.token}`,
					"content-type": "application/json",
					...init.headers,
				},
			});
			return { status: res.status, body: (await res.json()) as never };
		},
		async waitForRun(
			id,
			done = (r) => isTerminalRun(r.status as RunStatus) && r.tracker?.done === true,
			timeoutMs = 60_000,
		) {
			const deadline = Date.now() + timeoutMs;
			let last: unknown;
			while (Date.now() < deadline) {
				const res = await world
					.api<ApiRun>(`/api/runs/${id}`)
					.catch((err: Error) => ({ status: 0, body: err.message }));
				last = res;
				if (res.status === 200 && done(res.body as ApiRun)) return res.body as ApiRun;
				await new Promise((r) => setTimeout(r, 200));
			}
			throw new Error(
				`run ${id} did not reach the expected state; last seen: ${JSON.stringify(last)}`,
			);
		},
	};
	return world;
}

/**
 * A GitHub issue `user` files and labels for Lisa (a signed `issues` webhook), resolved by a run
 * that opened a pull request: the run's id and the pull request.
 */
export async function resolvedIssue(
	w: StackWorld,
	repo: string,
	issue: { title: string; body?: string; user: string },
): Promise<{ runId: string; pr: GitHubPull }> {
	const filed = w.github.addIssue(repo, { ...issue, labels: ["lisa"] });
	const res = await w.sendGitHub(
		"issues",
		issuesEvent(w.github, repo, filed, { label: "lisa", sender: issue.user }),
	);
	const { runId } = (await res.json()) as { runId: string };
	const run = await w.waitForRun(runId);
	if (run.status !== "succeeded") throw new Error(`run ${runId} ${run.status}: ${run.error ?? ""}`);
	const pr = w.github.pulls(repo).find((p) => p.body?.includes(runId));
	if (!pr) throw new Error(`run ${runId} opened no pull request`);
	return { runId, pr };
}
