import type { LisaConfig, RepoConfig } from "../../shared/config/schema";
import { parseModelSpec } from "../../shared/domain/fallback";
import { freshGuardrails, type Guardrail } from "../../shared/domain/guardrails";
import { conventionalTitle, prBody } from "../../shared/domain/pr-body";
import {
	buildImplementPrompt,
	type PreviousStep,
	type RetryContext,
} from "../../shared/domain/prompt";
import { headTail, lastLines, redact } from "../../shared/domain/redact";
import {
	branchName,
	type IssueSnapshot,
	previousSteps,
	type Run,
	type Step,
} from "../../shared/domain/run";
import { stepDeadline } from "../../shared/domain/supervision";
import { isTransientFailure } from "../../shared/domain/transient";
import type { Logger } from "../../shared/log";
import type { Queue } from "../../shared/queue/sqs";
import type { DynamoStore } from "../../shared/store/dynamo";
import { githubClient, statusOf } from "../../shared/trackers/github";
import type { ChainContext } from "./chain";
import { check, problemsText } from "./check";
import { describeFailure, runCommands, stopBackground } from "./commands";
import { StepFailure } from "./failure";
import { Git, gitEnv } from "./git";
import type { Heartbeat } from "./heartbeat";
import { type AgentUser, stopAgentProcesses } from "./identity";
import { type ImplementContext, implement } from "./implement";
import { readManifest } from "./manifest";
import { commandEnv } from "./providers/provider";
import { openPullRequest } from "./publish";
import { linkRelated, siblingPrs } from "./related";
import type { Timeline } from "./timeline";
import { type Work, Workspace } from "./workspace";

export interface TaskDeps {
	store: DynamoStore;
	queue: Queue;
	log: Logger;
	env: NodeJS.ProcessEnv;
	/** The code host token, kept out of every environment but the push's git process. */
	githubToken?: string;
	/** Secret values redacted from everything the task reports. */
	secrets: string[];
}

export interface StepRequest {
	runId: string;
	stepIndex: number;
	attempt: number;
	workspace: string;
}

/** What later runs of the repository should learn from this attempt (its guardrail). */
export interface Lesson {
	failure: Guardrail["failure"];
	summary: string;
	provider?: string;
}

export interface Attempt {
	deps: TaskDeps;
	run: Run;
	req: StepRequest;
	heartbeat: Heartbeat;
	timeline: Timeline;
	/** The attempt's first lesson: the one later runs of the repository learn. */
	lesson?: Lesson;
	/** The agent's own user (LISA_AGENT_*), when the task has one. */
	user?: AgentUser;
}

interface Resolved {
	config: LisaConfig;
	issue: IssueSnapshot;
	step: Step;
	repo: RepoConfig & { slug: string };
	branch: string;
	deadlineAt: number;
	/** What the plan's earlier orders produced (multi-repo runs). */
	previous: PreviousStep[];
}

/** The run's config snapshot, issue and the step: without them no attempt can start. */
export function runInputs(
	run: Run,
	stepIndex: number,
): { config: LisaConfig; issue: IssueSnapshot; step: Step } {
	const config = run.config;
	const step = run.steps[stepIndex];
	if (!config || !run.issue || !step)
		throw new StepFailure("the run has no config snapshot or issue", false, "config");
	return { config, issue: run.issue, step };
}

/** When the task gives up on the step, as of now. */
export const deadlineOf = (config: LisaConfig, step: Step): number =>
	stepDeadline(step.launchedAt, config.limits.step_timeout_minutes, Date.now());

/** What every agent run of the attempt shares: the config's models and limits, the attempt's supervision. */
export function chainContext(
	a: Attempt,
	config: LisaConfig,
	deadlineAt: number,
): Omit<ChainContext, "scratchDir"> {
	const limits = config.limits;
	return {
		models: config.models.map(parseModelSpec),
		env: a.deps.env,
		secrets: a.deps.secrets,
		staleSeconds: limits.stale_output_seconds,
		timeoutMinutes: limits.step_timeout_minutes,
		deadlineAt,
		heartbeat: a.heartbeat,
		timeline: a.timeline,
		user: a.user,
	};
}

/** Git for the attempt; with `url`, commands that talk to that remote get the token. */
export function gitFor(a: Attempt, url?: string): Git {
	const { env, githubToken } = a.deps;
	return new Git(gitEnv(env), githubToken && url ? { token: githubToken, url } : undefined, a.user);
}

export function checkoutFailure(repo: string, err: unknown): StepFailure {
	return new StepFailure(
		`could not check out ${repo}: ${(err as Error).message}`,
		isTransientFailure(String(err)),
		"checkout",
	);
}

function resolve(run: Run, stepIndex: number): Resolved {
	const { config, issue, step } = runInputs(run, stepIndex);
	const repo = config.repos.find((r) => r.name === step.repo);
	if (!repo)
		throw new StepFailure(`repo "${step.repo}" is not in the run's config`, false, "config");
	const { slug } = repo;
	if (!slug)
		throw new StepFailure(
			`repo "${repo.name}" has no slug: set slug: owner/name in the config`,
			false,
			"config",
		);
	return {
		config,
		issue,
		step,
		repo: { ...repo, slug },
		branch: branchName(config.branch_prefix, issue.key ?? run.issueKey ?? run.issueId, issue.title),
		deadlineAt: deadlineOf(config, step),
		previous: previousSteps(run, stepIndex),
	};
}

/** Prepare → implement and check (with retries) → publish. Throws StepFailure. */
export async function execute(
	a: Attempt,
): Promise<{ branch: string; prUrl: string; provider: string }> {
	const s = resolve(a.run, a.req.stepIndex);
	const git = gitFor(a, s.repo.url);
	const ws = new Workspace(git, a.req.workspace, s.repo.url, s.repo.base_branch, s.branch);
	await ws.prepare().catch((err) => {
		throw checkoutFailure(s.repo.name, err);
	});
	a.heartbeat.check();
	const background: number[] = [];
	try {
		const { work, provider } = await implementAndCheck(a, s, ws, background);
		await stopAgent(a);
		const prUrl = await publish(a, s, ws, work);
		return { branch: s.branch, prUrl, provider };
	} finally {
		stopBackground(background);
	}
}

/** Agent runs through the fallback chain until the work passes the checks, or retries run out. */
async function implementAndCheck(
	a: Attempt,
	s: Resolved,
	ws: Workspace,
	background: number[],
): Promise<{ work: Work; provider: string }> {
	const { deps, timeline } = a;
	const { repo, deadlineAt } = s;
	const limits = s.config.limits;
	const commands = {
		env: commandEnv(deps.env),
		deadlineAt,
		user: a.user,
		signal: a.heartbeat.signal,
	};
	const guardrails = freshGuardrails(
		await deps.store.guardrails(repo.name).catch(() => []),
		Date.now(),
	);
	const setUp = new Set<string>();
	let retry: RetryContext | undefined;
	const ctx: ImplementContext = {
		...chainContext(a, s.config, deadlineAt),
		ws,
		nativeWorktree: repo.native_worktree === true,
		async setup(dir) {
			if (setUp.has(dir) || !repo.setup.length) return;
			setUp.add(dir);
			const failure = await runCommands(repo.setup, { cwd: dir, background, ...commands });
			a.heartbeat.check();
			if (failure)
				throw new StepFailure(
					`${describeFailure("setup", failure)}: ${lastLines(failure.output)}`,
					isTransientFailure(failure.output),
					"setup",
				);
			await timeline.add("setup.finished", `setup ran: ${repo.setup.join(" && ")}`);
		},
		prompt: (native) =>
			buildImplementPrompt({
				issue: s.issue,
				repo: repo.name,
				branch: s.branch,
				baseBranch: repo.base_branch,
				scope: s.step.scope,
				previous: s.previous,
				allowWorkflowChanges: repo.allow_workflow_changes,
				nativeWorktree: native,
				guardrails,
				retry,
			}),
	};
	const validation = (v: NonNullable<Step["validation"]>) => a.heartbeat.write({ validation: v });

	const maxRuns = 1 + limits.max_validation_retries;
	let work: Work | undefined;
	let from = 0;
	for (let n = 1; ; n++) {
		const done = await implement(ctx, from, work);
		({ index: from, work } = done);
		await a.heartbeat.write({
			provider: done.spec,
			validation: { agentRuns: n, status: "checking" },
		});
		await ctx.setup(work.dir);
		const problems = await check(ws, work, repo, commands, timeline);
		a.heartbeat.check();
		if (!problems.length) {
			await validation({ agentRuns: n, status: "passed" });
			return { work, provider: done.spec };
		}
		const failure = problems.some((p) => p.kind === "validation") ? "validation" : "gate";
		const text = problemsText(problems);
		a.lesson ??= {
			failure,
			summary: problems.map((p) => p.lesson).join("; "),
			provider: done.spec,
		};
		const final = n >= maxRuns;
		const summary = problems.map((p) => p.summary).join("; ");
		await validation({
			agentRuns: n,
			status: final ? "failed" : "checking",
			lastFailure: headTail(redact(summary, deps.secrets), 1000),
		});
		const output = problems.flatMap((p) => (p.output ? [p.output] : [])).join("\n");
		await timeline.add(
			failure === "validation" ? "validation.failed" : "gate.refused",
			`${summary}${final ? "" : `; running the agent again (${n + 1} of ${maxRuns})`}`,
			output ? { output } : undefined,
		);
		if (final) throw new StepFailure(text, false, failure);
		retry = { run: n + 1, final: n + 1 >= maxRuns, problems };
	}
}

/**
 * With an agent user: kills every process of that user (a `setsid` watcher survives the process
 * groups), so nothing the agent started is alive while the task pushes with the token.
 */
export async function stopAgent(a: Attempt): Promise<void> {
	if (!a.user) return;
	const pids = await stopAgentProcesses(a.user);
	if (pids.length)
		await a.timeline.add(
			"agent.processes_stopped",
			`stopped ${pids.length} process${pids.length === 1 ? "" : "es"} the agent left running`,
			{ pids },
		);
}

/**
 * Pushes the work to the step's branch and opens (or updates) its pull request, once a heartbeat
 * written now confirms the step is still this attempt's. The manifest's title and body are the
 * agent's words: redacted like everything else that leaves the task.
 */
async function publish(a: Attempt, s: Resolved, ws: Workspace, work: Work): Promise<string> {
	const manifest = await readManifest(work.manifestDir);
	const secrets = a.deps.secrets;
	await a.heartbeat.confirm();
	await ws.push(work).catch((err) => {
		throw new StepFailure(
			`push failed: ${(err as Error).message}`,
			isTransientFailure(String(err)),
			"publish",
		);
	});
	await a.timeline.add("publish.pushed", `pushed ${s.branch}`);
	const { runId, stepIndex } = a.req;
	const octokit = githubClient(a.deps.githubToken, a.deps.env.GITHUB_API_URL);
	const related = s.step.order ? await siblingPrs(a.deps.store, runId, stepIndex) : [];
	let pr: { url: string; created: boolean };
	try {
		pr = await openPullRequest(octokit, {
			slug: s.repo.slug,
			head: s.branch,
			base: s.repo.base_branch,
			title: conventionalTitle(redact(manifest.prTitle, secrets)),
			body: prBody({
				body: redact(manifest.prBody, secrets),
				issueUrl: s.issue.url,
				issueKey: s.issue.key,
				runId: a.run.runId,
				related,
			}),
		});
	} catch (err) {
		const status = statusOf(err);
		const transient = status === undefined || status === 429 || status >= 500;
		throw new StepFailure(
			`opening the pull request failed: ${(err as Error).message}`,
			transient,
			"publish",
		);
	}
	await a.timeline.add("publish.pr", `${pr.created ? "opened" : "updated"} ${pr.url}`, {
		prUrl: pr.url,
	});
	if (s.step.order) {
		// Recorded at once so a sibling publishing in parallel links this PR too.
		await a.heartbeat.write({ prUrl: pr.url });
		const others = await siblingPrs(a.deps.store, runId, stepIndex);
		await linkRelated(octokit, [...others, { repo: s.repo.name, url: pr.url }], a.timeline);
	}
	if (!work.native) await ws.cleanup();
	return pr.url;
}
