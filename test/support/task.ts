import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ulid } from "ulid";
import { parseConfigText } from "../../src/config/load";
import type { Settings } from "../../src/config/settings";
import type { RoundInput } from "../../src/domain/follow-up";
import {
	newRun,
	newStep,
	PLAN_REPO,
	planStep,
	type Run,
	type Step,
	type StepReport,
} from "../../src/domain/run";
import { launchRepos, taskEnvironment } from "../../src/launcher/launcher";
import { createLogger } from "../../src/log";
import { storeAndQueue } from "../../src/runtime/aws";
import type { RunEvent } from "../../src/store";
import type { DynamoStore } from "../../src/store/dynamo";
import { runStep } from "../../src/task/attempt/step";
import type { FakeAgents } from "../doubles/agents/install";
import type { GitHubDouble } from "../doubles/github/server";
import type { BareRepo } from "./git";
import { ANTHROPIC_KEY, createWorld, LOG_LEVEL } from "./world";

export const LINEAR_KEY = "lin_api_shouldneverreachtheagent0123";

const TASK_ENTRY = fileURLToPath(new URL("../../src/task/main.ts", import.meta.url));
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** The agent task as its own process (`node src/task/main.ts`, as the local launcher runs it). */
interface TaskProcess {
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
	store: DynamoStore;
	/** Where the embedded store and queues are (what a launcher hands a task). */
	settings: Settings;
	/** The environment the task gets (fake agents first on PATH). */
	env: NodeJS.ProcessEnv;
	/**
	 * A running run with one step on repo `api`, as the pipeline leaves it before launching; with
	 * `plan`, a planning run whose step 0 is the planning step (every repo configured); with
	 * `round`, a follow-up round on a pull request of repo `api`; with `request`, the mention or
	 * prompt that asked for it; with `epic`, an epic run (every repo configured) at its research
	 * step, or at its plan step after a research step that reported this research.md.
	 */
	newRun(
		issue: { title: string; description?: string },
		configYaml?: string,
		opts?: {
			plan?: boolean;
			round?: RoundInput;
			request?: Run["request"];
			epic?: "research" | { research: string };
		},
	): Promise<string>;
	/** Runs the agent task for the current attempt of the run's last step, in-process. */
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
 * The agent task on its own: the base world's store and queue (dynalite, fauxqs), bare repos as the
 * remotes, the GitHub double and the fake agent CLIs; runs are written the way the pipeline writes
 * them.
 */
export async function createTaskWorld(
	files: Record<string, string> = {},
	/** gitHttp: repo `api` is reached over authenticated HTTP (the git host double), not file://. */
	opts: { moreRepos?: string[]; gitHttp?: boolean } = {},
): Promise<TaskWorld> {
	const w = await createWorld({
		name: "task",
		repos: ["api", ...(opts.moreRepos ?? [])],
		files,
		gitHttp: opts.gitHttp,
		github: true,
		agents: true,
		aws: true,
	});
	const { dir, repos, github } = w;
	const { store, queue } = storeAndQueue(w.aws.settings);
	const log = createLogger("lisa-task-test", { LOG_LEVEL });
	// The task's own environment: the fake agents, the GitHub API; no token but the agents' key.
	const env: NodeJS.ProcessEnv = {
		PATH: w.env.PATH,
		HOME: w.env.HOME,
		GITHUB_API_URL: w.env.GITHUB_API_URL,
		ANTHROPIC_API_KEY: ANTHROPIC_KEY,
		LINEAR_API_KEY: LINEAR_KEY,
	};
	let n = 0;
	const world: TaskWorld = {
		dir,
		repo: w.repo,
		repos,
		github,
		agents: w.agents,
		store,
		settings: w.aws.settings,
		env,
		async newRun(issue, configYaml = "", { plan = false, round, request, epic } = {}) {
			n++;
			const now = new Date().toISOString();
			const runId = ulid();
			const config = parseConfigText(
				`${w.reposYaml(plan || epic ? undefined : ["api"])}${configYaml}`,
				"task.yaml",
			);
			const phase = (index: number, kind: Step["kind"]): Step => ({
				...newStep(index, PLAN_REPO),
				kind,
			});
			const researched = (text: string): Step => ({
				...phase(0, "research"),
				status: "succeeded",
				report: { attempt: 1, outcome: "succeeded", research: { text }, at: now },
			});
			const earlier = typeof epic === "object" ? [researched(epic.research)] : [];
			const first = epic
				? phase(earlier.length, earlier.length ? "epic_plan" : "research")
				: plan
					? planStep(0)
					: newStep(0, "api");
			const run: Run = {
				...newRun({
					runId,
					source: "linear",
					issueId: `issue-${n}`,
					trigger: round ? "review" : "api",
					request,
					now,
				}),
				...(round ? { round, parentRunId: `${runId}-parent` } : {}),
				...(epic ? { kind: "epic" as const } : {}),
				status: plan || epic ? "planning" : "running",
				issueKey: `ENG-${n}`,
				config,
				issue: {
					id: `issue-${n}`,
					key: `ENG-${n}`,
					title: issue.title,
					description: issue.description ?? "",
					url: `https://linear.app/acme/issue/ENG-${n}`,
				},
				steps: [...earlier, { ...first, status: "running", launchedAt: now }],
			} as Run;
			await store.createRun(run);
			return runId;
		},
		async runTask(runId, extra = {}) {
			const run = await world.run(runId);
			const index = run.steps.length - 1;
			return runStep(
				{
					store,
					queue,
					log,
					env: { ...env, LISA_REPOS: JSON.stringify(launchRepos(run, index)), ...extra },
					githubToken: github.token,
					secrets: [ANTHROPIC_KEY, github.token],
				},
				{
					runId,
					stepIndex: index,
					attempt: run.steps[index]?.attempt ?? 1,
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
						w.aws.settings,
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
		stop: w.stop,
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
