import { generateKeyPairSync } from "node:crypto";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { z } from "zod";
import type { runAnswer } from "../../src/api/answers";
import type { SourceName } from "../../src/config/schema";
import type { Run } from "../../src/domain/run";
import { type FakeAgents, installFakeAgents } from "../doubles/agents/install";
import { type GitHttpServer, startGitHttp } from "../doubles/git-http/server";
import type { AppIdentity } from "../doubles/github/app-auth";
import { type GitHubDouble, startGitHubDouble } from "../doubles/github/server";
import { type DoubleIssue, type LinearDouble, startLinearDouble } from "../doubles/linear/server";
import { startTrelloDouble, type TrelloDouble } from "../doubles/trello/server";
import {
	type EmbeddedAws,
	embeddedAws,
	type FakeEcs,
	fakeEcs,
	type QueueOptions,
	REGION,
} from "./aws";
import { type BareRepo, bareRepo } from "./git";

// The one test world (docs/development.md › Tests): every part a test needs is started, configured
// and stopped here, on request. The specialised worlds are options of it plus what only they do:
// stack.ts (the local stack), task.ts (the agent task), pipeline.ts (the handlers in-process),
// lambda.ts (the Lambda entry points).

export const WEBHOOK_SECRET = "lin_whs_testsecret0123456789abcdef";
export const GITHUB_WEBHOOK_SECRET = "gh-webhook-secret-0123456789";
export const TRELLO_BOARD = "Web";
/** The agents' model key in every world (the fake CLIs call no model). */
export const ANTHROPIC_KEY = "sk-ant-test-0123456789abcdefghij";
/** Lisa's log level in tests: silent unless LISA_TEST_LOG says otherwise. */
export const LOG_LEVEL = process.env.LISA_TEST_LOG ?? "silent";

/**
 * A run as GET /api/runs/:id answers it: the fields the API's schema documents, and the run's own
 * fields the answer passes on beside them (the schema is loose).
 */
export type ApiRun = z.output<typeof runAnswer> &
	Pick<
		Run,
		| "tracker"
		| "waitingSince"
		| "agentSessionId"
		| "prompts"
		| "promptsDropped"
		| "closedPullRequests"
	>;

export interface WorldOptions {
	/** Names the temporary directory (`lisa-<name>-…`). */
	name: string;
	/** Bare repositories on file:// remotes, `api` first; on the GitHub double as acme/<name>. */
	repos?: readonly string[];
	/** Files in `api`'s first commit besides its README. */
	files?: Record<string, string>;
	/** `api` reached over authenticated HTTP instead: the git host double, with `github`'s token. */
	gitHttp?: boolean;
	/** The Linear double: team ENG with labels lisa and bug; its viewer is Lisa. */
	linear?: boolean;
	github?: boolean;
	/**
	 * With `github`: Lisa authenticates as a GitHub App installed on every repository (GITHUB_APP_*,
	 * no GITHUB_TOKEN); the git host double takes the installation's tokens for their repositories.
	 */
	githubApp?: boolean;
	/** The Trello double with board "Web" (lists Todo, In Progress, In Review, Merged; labels lisa, bug). */
	trello?: boolean;
	/** The fake agent CLIs, first on PATH, with HOME in the world's directory. */
	agents?: boolean;
	/** dynalite and fauxqs with Lisa's table and queues. */
	aws?: true | QueueOptions;
	/** ECS as aws-sdk-client-mock (nothing emulates it offline). */
	ecs?: boolean;
	/** Writes the config file (LISA_CONFIG). */
	config?: ConfigOptions;
}

export interface ConfigOptions {
	/** The tracker (default linear). */
	source?: SourceName;
	/** Repositories only named, at github.com URLs nothing clones (default: the world's own). */
	repos?: readonly string[];
	/** YAML appended. */
	extra?: string;
	/** Every repository's `network.allow`. */
	allow?: readonly string[];
	/** Every repository's `setup` commands. */
	setup?: readonly string[];
	/** The whole text instead. */
	text?: (w: { repo: BareRepo; repos: Record<string, BareRepo> }) => string;
}

/** The part `K` when the options start it, `undefined` when they do not, either when they may. */
type Part<O, K extends keyof WorldOptions, T> = O extends { [P in K]: true | object }
	? T
	: K extends keyof O
		? O[K] extends false | undefined
			? undefined
			: T | undefined
		: undefined;

export interface World<O extends WorldOptions = WorldOptions> {
	dir: string;
	/** What Lisa needs to reach the parts: their URLs, credentials, the config file, the log level. */
	env: NodeJS.ProcessEnv;
	configFile: Part<O, "config", string>;
	/** The `api` repository (its file:// URL even with `gitHttp`). */
	repo: Part<O, "repos", BareRepo>;
	/** Every repository by name, as the config names them. */
	repos: Part<O, "repos", Record<string, BareRepo>>;
	gitHttp: Part<O, "gitHttp", GitHttpServer>;
	linear: Part<O, "linear", LinearDouble>;
	github: Part<O, "github", GitHubDouble>;
	trello: Part<O, "trello", TrelloDouble>;
	agents: Part<O, "agents", FakeAgents>;
	aws: Part<O, "aws", EmbeddedAws>;
	ecs: Part<O, "ecs", FakeEcs>;
	/** A Linear issue in team ENG, state Todo, labelled `lisa` unless `labels` says otherwise. */
	issue: Part<O, "linear", (title: string, description?: string, labels?: string[]) => DoubleIssue>;
	/** The config's `repos:` entries for these of the world's repositories (default all). */
	reposYaml(names?: string[]): string;
	/** Runs at stop, before the parts started earlier stop. */
	onStop(stop: () => unknown): void;
	stop(): Promise<void>;
}

const SOURCE_CONFIG: Record<SourceName, string> = {
	linear:
		"source: linear\nsource_config: {team: ENG, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}",
	trello: `source: trello\nsource_config: {team: ${TRELLO_BOARD}, label: lisa, pick_from: Todo, in_progress: In Progress, done: In Review}`,
	github:
		"source: github\nsource_config: {team: acme/api, label: lisa, pick_from: open, in_progress: in progress, done: in review}",
};

export async function createWorld<const O extends WorldOptions>(opts: O): Promise<World<O>> {
	const dir = await mkdtemp(path.join(os.tmpdir(), `lisa-${opts.name}-`));
	// As root agents run as uids of their own: they must reach their workspaces and the fake CLIs in
	// here (mkdtemp makes it 0700).
	await chmod(dir, 0o711);
	const stops: (() => unknown)[] = [];
	const env: NodeJS.ProcessEnv = { LOG_LEVEL };
	const w = {
		dir,
		env,
		onStop: (stop: () => unknown) => stops.push(stop),
		async stop() {
			let failure: unknown;
			for (const stop of stops.splice(0).reverse())
				await Promise.resolve()
					.then(stop)
					.catch((err) => {
						failure ??= err;
					});
			await rm(dir, { recursive: true, force: true });
			if (failure) throw failure;
		},
	} as Record<string, unknown> & Pick<World, "dir" | "env" | "onStop" | "stop">;
	try {
		const repos: Record<string, BareRepo> = {};
		for (const [i, name] of (opts.repos ?? []).entries())
			repos[name] = await bareRepo(dir, name, "main", i === 0 ? opts.files : {});
		const [first] = Object.values(repos);
		if (first) {
			w.repo = first;
			w.repos = repos;
		}

		if (opts.linear) {
			const linear = await startLinearDouble();
			w.onStop(() => linear.stop());
			linear.state.viewer.name = "Lisa";
			const team = linear.addTeam({ key: "ENG", name: "Engineering" });
			linear.addLabel(team.id, "lisa");
			linear.addLabel(team.id, "bug");
			Object.assign(env, {
				LINEAR_API_KEY: linear.apiKey,
				LINEAR_API_URL: linear.url,
				LINEAR_WEBHOOK_SECRET: WEBHOOK_SECRET,
			});
			w.linear = linear;
			w.issue = (title: string, description = "", labels = ["lisa"]) =>
				linear.addIssue({ teamKey: "ENG", title, description, state: "Todo", labels });
		}
		if (opts.github) {
			const app = opts.githubApp ? testApp(Object.keys(repos).map((n) => `acme/${n}`)) : undefined;
			const github = await startGitHubDouble({
				repos: Object.fromEntries(Object.entries(repos).map(([n, r]) => [`acme/${n}`, r.path])),
				app: app?.identity,
			});
			w.onStop(() => github.stop());
			Object.assign(env, {
				...(app ? app.env : { GITHUB_TOKEN: github.token }),
				GITHUB_API_URL: github.url,
				GITHUB_WEBHOOK_SECRET,
			});
			w.github = github;
			const [api] = Object.keys(repos);
			if (opts.gitHttp && api && first) {
				const gitHttp = await startGitHttp({
					root: dir,
					token: github.token,
					authorize: (password, repo, write) =>
						github.installationTokens.allowsGit(
							password,
							`acme/${repo.replace(/\.git$/, "")}`,
							write,
						),
				});
				w.onStop(() => gitHttp.stop());
				repos[api] = { ...first, url: `${gitHttp.url}/${api}.git` };
				w.gitHttp = gitHttp;
			}
		}
		if (opts.trello) {
			const trello = await startTrelloDouble();
			w.onStop(() => trello.stop());
			trello.store.addBoard(
				TRELLO_BOARD,
				["Todo", "In Progress", "In Review", "Merged"],
				["lisa", "bug"],
			);
			Object.assign(env, {
				TRELLO_API_KEY: trello.apiKey,
				TRELLO_TOKEN: trello.token,
				TRELLO_APP_SECRET: trello.appSecret,
				TRELLO_API_URL: trello.url,
			});
			w.trello = trello;
		}
		if (opts.agents) {
			const agents = await installFakeAgents(dir);
			Object.assign(env, {
				PATH: `${agents.bin}:${process.env.PATH}`,
				HOME: dir,
				ANTHROPIC_API_KEY: ANTHROPIC_KEY,
			});
			w.agents = agents;
		}
		if (opts.aws) {
			const aws = await embeddedAws(opts.aws === true ? {} : opts.aws);
			w.onStop(() => aws.stop());
			const s = aws.settings;
			Object.assign(env, {
				LISA_TABLE_NAME: s.tableName,
				LISA_INTAKE_QUEUE_URL: s.intakeQueueUrl,
				LISA_EVENTS_QUEUE_URL: s.eventsQueueUrl,
				LISA_DYNAMODB_ENDPOINT: s.dynamoEndpoint,
				LISA_SQS_ENDPOINT: s.sqsEndpoint,
				LISA_LOCAL_AWS_KEY: s.localAccessKey,
				AWS_REGION: REGION,
			});
			w.aws = aws;
		}
		if (opts.ecs) {
			const ecs = fakeEcs();
			w.onStop(() => ecs.restore());
			w.ecs = ecs;
		}

		const reposYaml = (names = Object.keys(repos)) =>
			`repos:\n${names
				.map((name) => {
					const url = repos[name]?.url ?? `https://github.com/acme/${name}.git`;
					const slug = opts.github ? `    slug: acme/${name}\n` : "";
					const allow = opts.config?.allow
						? `    network: {allow: ${JSON.stringify(opts.config.allow)}}\n`
						: "";
					const setup = opts.config?.setup
						? `    setup: ${JSON.stringify(opts.config.setup)}\n`
						: "";
					return `  - name: ${name}\n    url: ${url}\n${slug}${allow}${setup}`;
				})
				.join("")}`;
		w.reposYaml = reposYaml;
		const c = opts.config;
		if (c) {
			const configFile = path.join(dir, "config.yaml");
			if (c.text && !first) throw new Error("a config text needs the world's repositories");
			await writeFile(
				configFile,
				c.text && first
					? c.text({ repo: first, repos })
					: `${SOURCE_CONFIG[c.source ?? "linear"]}\n${reposYaml(c.repos && [...c.repos])}${c.extra ?? ""}`,
			);
			env.LISA_CONFIG = configFile;
			w.configFile = configFile;
		}
	} catch (err) {
		await w.stop().catch(() => {});
		throw err;
	}
	return w as unknown as World<O>;
}

/**
 * A GitHub App installed on `repos` with what Lisa asks of it
 * (docs/trackers.md › As a GitHub App (a token per step)): its identity for the double and the
 * variables that make Lisa use it.
 */
export function testApp(repos: string[]): { identity: AppIdentity; env: NodeJS.ProcessEnv } {
	const keys = generateKeyPairSync("rsa", {
		modulusLength: 2048,
		publicKeyEncoding: { type: "spki", format: "pem" },
		privateKeyEncoding: { type: "pkcs8", format: "pem" },
	});
	const identity: AppIdentity = {
		id: 4242,
		slug: "lisa-test",
		publicKey: keys.publicKey,
		installation: {
			id: 77,
			repos,
			permissions: {
				contents: "write",
				pull_requests: "write",
				issues: "write",
				checks: "read",
				actions: "read",
			},
		},
	};
	return {
		identity,
		env: {
			GITHUB_APP_ID: String(identity.id),
			GITHUB_APP_PRIVATE_KEY: keys.privateKey,
			GITHUB_APP_INSTALLATION_ID: String(identity.installation.id),
		},
	};
}
