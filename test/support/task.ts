import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseConfigText } from "../../shared/config/load";
import { newRun, newStep, planStep, type Run, type StepReport } from "../../shared/domain/run";
import { createLogger } from "../../shared/log";
import { storeAndQueue } from "../../shared/runtime";
import type { DynamoStore, RunEvent } from "../../shared/store/dynamo";
import { runStep } from "../../tasks/agent/step";
import { type FakeAgents, installFakeAgents } from "../doubles/agents/install";
import { type GitHubDouble, startGitHubDouble } from "../doubles/github/server";
import { embeddedAws } from "./aws";
import { type BareRepo, bareRepo } from "./git";

export const ANTHROPIC_KEY = "sk-ant-task-0123456789abcdefghijkl";

export interface TaskWorld {
	dir: string;
	repo: BareRepo;
	/** `api` and the `moreRepos`, by name. */
	repos: Record<string, BareRepo>;
	github: GitHubDouble;
	agents: FakeAgents;
	store: DynamoStore;
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
	opts: { moreRepos?: string[] } = {},
): Promise<TaskWorld> {
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-task-"));
	const repo = await bareRepo(dir, "api", "main", files);
	const repos: Record<string, BareRepo> = { api: repo };
	for (const name of opts.moreRepos ?? []) repos[name] = await bareRepo(dir, name);
	const github = await startGitHubDouble({
		repos: Object.fromEntries(Object.entries(repos).map(([name, r]) => [`acme/${name}`, r.path])),
	});
	const agents = await installFakeAgents(dir);
	const aws = await embeddedAws();
	const { store, queue } = storeAndQueue(aws.settings);
	const log = createLogger("lisa-task-test", { LOG_LEVEL: process.env.LISA_TEST_LOG ?? "silent" });
	const env: NodeJS.ProcessEnv = {
		PATH: `${agents.bin}:${process.env.PATH}`,
		HOME: dir,
		GITHUB_API_URL: github.url,
		ANTHROPIC_API_KEY: ANTHROPIC_KEY,
		LINEAR_API_KEY: "lin_api_shouldneverreachtheagent0123",
	};
	let n = 0;
	const world: TaskWorld = {
		dir,
		repo,
		repos,
		github,
		agents,
		store,
		env,
		async newRun(issue, configYaml = "", { plan = false } = {}) {
			n++;
			const now = new Date().toISOString();
			const runId = `TASKRUN${String(n).padStart(4, "0")}`;
			const listed = plan ? Object.entries(repos) : [["api", repo] as const];
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
					env: { ...env, ...extra },
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
