import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createApp } from "../../src/api/app";
import type { Settings } from "../../src/config/settings";
import { isTerminalRun, type RunStatus } from "../../src/domain/states";
import type { StepAttemptUsage } from "../../src/domain/usage";
import { type LocalStack, startLocalStack } from "../../src/local/stack";
import { createLogger } from "../../src/log";
import { type FakeAgents, installFakeAgents } from "../doubles/agents/install";
import { type GitHubDouble, startGitHubDouble } from "../doubles/github/server";
import { type LinearDouble, startLinearDouble } from "../doubles/linear/server";
import { issueWebhook, linearHeaders } from "../doubles/linear/webhook";
import { startTrelloDouble, type TrelloDouble } from "../doubles/trello/server";
import { type BareRepo, bareRepo } from "./git";

export const WEBHOOK_SECRET = "lin_whs_testsecret0123456789abcdef";
export const GITHUB_WEBHOOK_SECRET = "gh-webhook-secret-0123456789";
export const TRELLO_BOARD = "Web";

export interface WorldOptions {
	/** The tracker the generated config uses (default linear). */
	source?: "linear" | "trello" | "github";
	/** Extra YAML appended to the generated config. */
	configExtra?: string;
	/** More repositories beside `api` (bare repos, on the GitHub double as acme/<name>, in the config). */
	moreRepos?: string[];
	/** Replace the generated config entirely. */
	config?: (w: { repo: BareRepo; repos: Record<string, BareRepo> }) => string;
	env?: Record<string, string | undefined>;
	/** Start the stack in-process (default) or leave it to the test. */
	startStack?: boolean;
}

export interface World {
	dir: string;
	/** The `api` repository. */
	repo: BareRepo;
	/** Every repository by name (`api` and `moreRepos`). */
	repos: Record<string, BareRepo>;
	linear: LinearDouble;
	github: GitHubDouble;
	/** Trello double with board "Web" (lists Todo, In Progress, In Review, Merged; labels lisa, bug). */
	trello: TrelloDouble;
	agents: FakeAgents;
	env: NodeJS.ProcessEnv;
	stack?: LocalStack;
	/** Point the helpers at a stack running in another process. */
	attach(url: string, token: string): void;
	/** A Linear issue in team ENG, state Todo, labelled `lisa` unless `labels` says otherwise. */
	issue(
		title: string,
		description?: string,
		labels?: string[],
	): ReturnType<LinearDouble["addIssue"]>;
	/**
	 * The in-process stack's app built again with some of its tracker settings changed (merged into
	 * each one: `{ github: { webhookSecret: undefined } }`); the stack itself keeps its own.
	 */
	appWith(patch: SettingsPatch): ReturnType<typeof createApp>;
	/** POSTs a raw body to a path of the stack. */
	post(p: string, body: string, headers: Record<string, string>): Promise<Response>;
	/** POSTs a signed Issue webhook; returns the response. */
	sendWebhook(body: string, headers?: Record<string, string>): Promise<Response>;
	createdWebhook(issue: ReturnType<LinearDouble["addIssue"]>): string;
	api<T = unknown>(p: string, init?: RequestInit): Promise<{ status: number; body: T }>;
	waitForRun(id: string, done?: (run: ApiRun) => boolean, timeoutMs?: number): Promise<ApiRun>;
	url(): string;
	stop(): Promise<void>;
}

export type SettingsPatch = Partial<Omit<Settings, "linear" | "github" | "trello">> & {
	[K in "linear" | "github" | "trello"]?: Partial<Settings[K]>;
};

export interface ApiRun {
	id: string;
	status: string;
	error?: string;
	issueId: string;
	issueKey?: string;
	prUrls: string[];
	plan?: { steps: { repo: string; scope: string; order: number }[] };
	steps: {
		index: number;
		repo: string;
		kind?: string;
		scope?: string;
		order?: number;
		status: string;
		attempt: number;
		branch?: string;
		prUrl?: string;
		error?: string;
		agentState?: string;
		taskId?: string;
		provider?: string;
		usage?: StepAttemptUsage[];
	}[];
	tracker: Record<string, boolean>;
	waitingSince?: string;
	trigger?: string;
	links: { dashboard: string };
}

/** Everything a pipeline test needs: doubles for Linear/GitHub/agents, a bare repo, the local stack. */
export async function createWorld(opts: WorldOptions = {}): Promise<World> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-e2e-"));
	// As root the stack runs agents as uids of their own: they must reach their workspaces and the
	// fake CLIs in here (mkdtemp makes it 0700).
	await chmod(dir, 0o711);
	const repo = await bareRepo(dir, "api");
	const repos: Record<string, BareRepo> = { api: repo };
	for (const name of opts.moreRepos ?? []) repos[name] = await bareRepo(dir, name);
	const linear = await startLinearDouble();
	linear.state.viewer.name = "Lisa";
	const team = linear.addTeam({ key: "ENG", name: "Engineering" });
	linear.addLabel(team.id, "lisa");
	linear.addLabel(team.id, "bug");
	const github = await startGitHubDouble({
		repos: Object.fromEntries(Object.entries(repos).map(([name, r]) => [`acme/${name}`, r.path])),
	});
	const trello = await startTrelloDouble();
	trello.store.addBoard(
		TRELLO_BOARD,
		["Todo", "In Progress", "In Review", "Merged"],
		["lisa", "bug"],
	);
	const agents = await installFakeAgents(dir);
	const configFile = path.join(dir, "config.yaml");
	const sourceConfig = {
		linear:
			"source: linear\nsource_config: {team: ENG, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}",
		trello: `source: trello\nsource_config: {team: ${TRELLO_BOARD}, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}`,
		github:
			"source: github\nsource_config: {team: acme/api, label: lisa, pick_from: open, in_progress: in progress, done: in review}",
	}[opts.source ?? "linear"];
	await writeFile(
		configFile,
		opts.config?.({ repo, repos }) ??
			`${sourceConfig}
provider: claude
repos:
${Object.entries(repos)
	.map(([name, r]) => `  - name: ${name}\n    url: ${r.url}\n    slug: acme/${name}\n`)
	.join("")}${opts.configExtra ?? ""}`,
	);
	const env: NodeJS.ProcessEnv = {
		PATH: `${agents.bin}:${process.env.PATH}`,
		HOME: dir,
		PORT: "0",
		LISA_DATA_DIR: path.join(dir, "data"),
		LISA_CONFIG: configFile,
		LINEAR_API_KEY: linear.apiKey,
		LINEAR_API_URL: linear.url,
		LINEAR_WEBHOOK_SECRET: WEBHOOK_SECRET,
		GITHUB_TOKEN: github.token,
		GITHUB_API_URL: github.url,
		GITHUB_WEBHOOK_SECRET,
		TRELLO_API_KEY: trello.apiKey,
		TRELLO_TOKEN: trello.token,
		TRELLO_APP_SECRET: trello.appSecret,
		TRELLO_API_URL: trello.url,
		ANTHROPIC_API_KEY: "sk-ant-test-0123456789abcdefghij",
		AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
		LOG_LEVEL: process.env.LISA_TEST_LOG ?? "silent",
		...opts.env,
	};
	const log = createLogger("lisa-test", env);
	const stack =
		opts.startStack === false
			? undefined
			: await startLocalStack({ env, log, sweepIntervalMs: 1000 });

	let target = stack ? { url: stack.url, token: stack.apiToken } : undefined;
	const world: World = {
		dir,
		repo,
		repos,
		linear,
		github,
		trello,
		agents,
		env,
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
		issue: (title, description = "", labels = ["lisa"]) =>
			linear.addIssue({ teamKey: "ENG", title, description, state: "Todo", labels }),
		createdWebhook: (issue) =>
			JSON.stringify(issueWebhook({ action: "create", issue, double: linear })),
		post: (p, body, headers) => fetch(`${world.url()}${p}`, { method: "POST", body, headers }),
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
		async stop() {
			await world.stack?.stop();
			await linear.stop();
			await github.stop();
			await trello.stop();
			await rm(dir, { recursive: true, force: true });
		},
	};
	return world;
}
