import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ulid } from "ulid";
import { parseConfigText } from "../../src/config/load";
import type { Settings } from "../../src/config/settings";
import { newRun, newStep, planStep, type Run, type StepReport } from "../../src/domain/run";
import { launchRepos, taskEnvironment } from "../../src/launcher/launcher";
import { createLogger } from "../../src/log";
import { storeAndQueue } from "../../src/runtime/aws";
import type { RunEvent } from "../../src/store";
import type { DynamoStore } from "../../src/store/dynamo";
import { runStep } from "../../src/task/attempt/step";
import { type FakeAgentCall, type FakeAgents, installFakeAgents } from "../doubles/agents/install";
import { type GitHttpServer, startGitHttp } from "../doubles/git-http/server";
import { type GitHubDouble, startGitHubDouble } from "../doubles/github/server";
import { embeddedAws } from "./aws";
import { type BareRepo, bareRepo } from "./git";

export const ANTHROPIC_KEY = "sk-ant-task-0123456789abcdefghijkl";
export const LINEAR_KEY = "lin_api_shouldneverreachtheagent0123";

const TASK_ENTRY = fileURLToPath(new URL("../../src/task/main.ts", import.meta.url));
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** The agent task as its own process (`node src/task/main.ts`, as the local launcher runs it). */
export interface TaskProcess {
	pid: number;
	/** Its exit, with everything it wrote to stdout and stderr (its JSON log). */
	exited: Promise<{ code: number | null; output: string }>;
}

export interface TaskWorld {
	dir: string;
	repo: BareRepo;
	/** `api` and the `moreRepos`, by name. */
	repos: Record<string, BareRepo>;
	github: GitHubDouble;
	agents: FakeAgents;
	/** The fake agents' calls in the run's workspace. */
	callsOf(runId: string): Promise<FakeAgentCall[]>;
	store: DynamoStore;
	/** Where the embedded store and queues are (what a launcher hands a task). */
	settings: Settings;
	/** The environment the task gets (fake agents first on PATH). */
	env: NodeJS.ProcessEnv;
	/**
	 * A running run with one step on repo `api`, as the pipeline leaves it before launching; with
	 * `plan`, a planning run whose step 0 is the planning step (every repo configured).
	 */
	newRun(
		issue: { title: string; description?: string },
		configYaml?: string,
		opts?: { plan?: boolean },
	): Promise<string>;
	/** Runs the agent task for the step's current attempt, in-process. */
	runTask(runId: string, env?: NodeJS.ProcessEnv): Promise<StepReport | undefined>;
	/**
	 * Starts the agent task for the step's current attempt as a process with the launcher's
	 * environment (GITHUB_TOKEN and the other secrets in it, as a task gets them).
	 */
	startTask(runId: string, env?: NodeJS.ProcessEnv): Promise<TaskProcess>;
	/** What the pipeline does before a retry: the next attempt of the step. */
	nextAttempt(runId: string): Promise<void>;
	run(runId: string): Promise<Run>;
	events(runId: string): Promise<RunEvent[]>;
	workspace(runId: string): string;
	stop(): Promise<void>;
}

/**
 * The agent task on its own: real store and queue (dynalite, fauxqs), a bare repo as the remote,
 * the GitHub double and the fake agent CLIs; runs are written the way the pipeline writes them.
 */
export async function createTaskWorld(
	files: Record<string, string> = {},
	/** gitHttp: repo `api` is reached over authenticated HTTP (the git host double), not file://. */
	opts: { moreRepos?: string[]; gitHttp?: boolean } = {},
): Promise<TaskWorld> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-task-"));
	const repo = await bareRepo(dir, "api", "main", files);
	const repos: Record<string, BareRepo> = { api: repo };
	for (const name of opts.moreRepos ?? []) repos[name] = await bareRepo(dir, name);
	const github = await startGitHubDouble({
		repos: Object.fromEntries(Object.entries(repos).map(([name, r]) => [`acme/${name}`, r.path])),
	});
	let gitHttp: GitHttpServer | undefined;
	if (opts.gitHttp) {
		gitHttp = await startGitHttp({ root: dir, token: github.token });
		repos.api = { ...repo, url: `${gitHttp.url}/api.git` };
	}
	const agents = await installFakeAgents(dir);
	const aws = await embeddedAws();
	const { store, queue } = storeAndQueue(aws.settings);
	const log = createLogger("lisa-task-test", { LOG_LEVEL: process.env.LISA_TEST_LOG ?? "silent" });
	const env: NodeJS.ProcessEnv = {
		PATH: `${agents.bin}:${process.env.PATH}`,
		HOME: dir,
		GITHUB_API_URL: github.url,
		ANTHROPIC_API_KEY: ANTHROPIC_KEY,
		LINEAR_API_KEY: LINEAR_KEY,
	};
	let n = 0;
	const world: TaskWorld = {
		dir,
		repo,
		repos,
		github,
		agents,
		async callsOf(runId) {
			return (await agents.calls()).filter((c) => c.cwd.includes(runId));
		},
		store,
		settings: aws.settings,
		env,
		async newRun(issue, configYaml = "", { plan = false } = {}) {
			n++;
			const now = new Date().toISOString();
			const runId = ulid();
			const listed = plan ? Object.entries(repos) : [["api", repos.api as BareRepo] as const];
			const config = parseConfigText(
				`repos:\n${listed.map(([name, r]) => `  - name: ${name}\n    url: ${r.url}\n    slug: acme/${name}\n`).join("")}${configYaml}`,
				"task.yaml",
			);
			const first = plan ? planStep(0) : newStep(0, "api");
			const run: Run = {
				...newRun({ runId, source: "linear", issueId: `issue-${n}`, trigger: "api", now }),
				status: plan ? "planning" : "running",
				issueKey: `ENG-${n}`,
				config,
				issue: {
					id: `issue-${n}`,
					key: `ENG-${n}`,
					title: issue.title,
					description: issue.description ?? "",
					url: `https://linear.app/acme/issue/ENG-${n}`,
				},
				steps: [{ ...first, status: "running", launchedAt: now }],
			};
			await store.createRun(run);
			return runId;
		},
		async runTask(runId, extra = {}) {
			const run = await world.run(runId);
			return runStep(
				{
					store,
					queue,
					log,
					env: { ...env, LISA_REPOS: JSON.stringify(launchRepos(run, 0)), ...extra },
					githubToken: github.token,
					secrets: [ANTHROPIC_KEY, github.token],
				},
				{
					runId,
					stepIndex: 0,
					attempt: run.steps[0]?.attempt ?? 1,
					workspace: world.workspace(runId),
				},
			);
		},
		async startTask(runId, extra = {}) {
			const run = await world.run(runId);
			const attempt = run.steps[0]?.attempt ?? 1;
			const output: string[] = [];
			const child = spawn(process.execPath, ["--import", TSX_LOADER, TASK_ENTRY], {
				cwd: dir,
				env: {
					...env,
					...taskEnvironment(
						{ runId, stepIndex: 0, attempt, repos: launchRepos(run, 0) },
						aws.settings,
					),
					GITHUB_TOKEN: github.token,
					LISA_WORKSPACE: world.workspace(runId),
					LOG_LEVEL: "info",
					...extra,
				},
				stdio: ["ignore", "pipe", "pipe"],
			});
			child.stdout.on("data", (b: Buffer) => output.push(b.toString()));
			child.stderr.on("data", (b: Buffer) => output.push(b.toString()));
			if (child.pid === undefined) throw new Error("could not start the task");
			return {
				pid: child.pid,
				exited: new Promise((resolve) =>
					child.on("close", (code) => resolve({ code, output: output.join("") })),
				),
			};
		},
		async nextAttempt(runId) {
			const run = await world.run(runId);
			const step = run.steps[0];
			if (!step) throw new Error("no step");
			await store.updateRun(
				run,
				{
					steps: {
						0: {
							attempt: step.attempt + 1,
							status: "launching",
							report: undefined,
							launchedAt: new Date().toISOString(),
						},
					},
				},
				new Date().toISOString(),
			);
		},
		async run(runId) {
			const run = await store.getRun(runId);
			if (!run) throw new Error(`no run ${runId}`);
			return run;
		},
		async events(runId) {
			return (await store.listEvents(runId, 500)).items;
		},
		workspace: (runId) => path.join(dir, "workspaces", runId),
		async stop() {
			await gitHttp?.stop();
			await github.stop();
			await aws.stop();
			await rm(dir, { recursive: true, force: true });
		},
	};
	return world;
}

/** Whether a process is running (a zombie waiting to be reaped is not). */
export function isRunning(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
	} catch {
		return false;
	}
}
