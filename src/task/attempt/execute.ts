import type { LisaConfig, RepoConfig } from "../../config/schema";
import { freshGuardrails, type Guardrail } from "../../domain/guardrails";
import { headTail, lastLines, redact } from "../../domain/redact";
import {
	branchName,
	type IssueSnapshot,
	previousSteps,
	type Run,
	type Step,
} from "../../domain/run";
import { isTransientFailure, isTransientStatus } from "../../domain/transient";
import type { AgentRunUsage } from "../../domain/usage";
import { githubClient, statusOf } from "../../integrations/github/issues";
import { conventionalTitle, prBody } from "../../integrations/github/pulls/body";
import { openPullRequest } from "../../integrations/github/pulls/open";
import { linkRelated, siblingPrs } from "../../integrations/github/pulls/related";
import type { LaunchRepo } from "../../launcher/launcher";
import type { Logger } from "../../log";
import type { Queue } from "../../queue/sqs";
import type { TaskStore } from "../../store";
import type { ChainContext } from "../agents/chain";
import { parseModelSpec } from "../agents/fallback";
import { commandEnv } from "../agents/providers/provider";
import { stepDeadline } from "../agents/supervision";
import { Git, gitEnv } from "../sandbox/git";
import { type AgentScope, stopAgentProcesses } from "../sandbox/identity";
import { type Work, Workspace } from "../sandbox/workspace";
import { type CheckProblem, gates, problemsText, validate, workFacts } from "../steps/check";
import { describeFailure, runCommands } from "../steps/commands";
import { type ImplementContext, implement } from "../steps/implement";
import { readManifest } from "../steps/manifest";
import { buildImplementPrompt, type PreviousStep, type RetryContext } from "../steps/prompt";
import { StepFailure } from "./failure";
import type { Heartbeat } from "./heartbeat";
import { launchedRepo } from "./repos";
import type { Timeline } from "./timeline";

export interface TaskDeps {
	store: TaskStore;
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
	/** The agent's processes: its own user's (LISA_AGENT_*), or those carrying the attempt's mark. */
	scope: AgentScope;
	/** The repositories the launch handed the task (LISA_REPOS). */
	repos: LaunchRepo[];
	/** Every agent run of the attempt, for its report's usage. */
	agentRuns: AgentRunUsage[];
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
		user: a.scope.user,
		agentRuns: a.agentRuns,
	};
}

/** Git for the attempt; with `url`, commands that talk to that remote get the token. */
export function gitFor(a: Attempt, url?: string): Git {
	const { env, githubToken } = a.deps;
	return new Git(
		gitEnv(env),
		githubToken && url ? { token: githubToken, url } : undefined,
		a.scope.user,
	);
}

export function checkoutFailure(repo: string, err: unknown): StepFailure {
	return new StepFailure(
		`could not check out ${repo}: ${(err as Error).message}`,
		isTransientFailure(String(err)),
		"checkout",
	);
}

function resolve(a: Attempt): Resolved {
	const { config, issue, step } = runInputs(a.run, a.req.stepIndex);
	const configured = config.repos.find((r) => r.name === step.repo);
	if (!configured)
		throw new StepFailure(`repo "${step.repo}" is not in the run's config`, false, "config");
	// Where the token goes comes from the launch; the snapshot says what to run there.
	const { url, slug } = launchedRepo(a.repos, configured.name);
	if (!slug)
		throw new StepFailure(
			`repo "${configured.name}" has no slug: set slug: owner/name in the config`,
			false,
			"config",
		);
	return {
		config,
		issue,
		step,
		repo: { ...configured, url, slug },
		branch: branchName(
			config.branch_prefix,
			issue.key ?? a.run.issueKey ?? a.run.issueId,
			issue.title,
		),
		deadlineAt: deadlineOf(config, step),
		previous: previousSteps(a.run, a.req.stepIndex),
	};
}

/** Prepare → implement and check (with retries) → publish. Throws StepFailure. */
export async function execute(
	a: Attempt,
): Promise<{ branch: string; prUrl: string; provider: string }> {
	const s = resolve(a);
	const git = gitFor(a, s.repo.url);
	const ws = new Workspace(git, a.req.workspace, s.repo.url, s.repo.base_branch, s.branch);
	await ws.prepare().catch((err) => {
		throw checkoutFailure(s.repo.name, err);
	});
	a.heartbeat.check();
	const { sha, work, provider } = await implementAndCheck(a, s, ws);
	const prUrl = await publish(a, s, ws, work, sha);
	return { branch: s.branch, prUrl, provider };
}

/**
 * Agent runs through the fallback chain until the work passes the checks, or retries run out.
 * Each round: the agent; its HEAD copied into the publish repository and the gates judged there;
 * validate; then every process the agent could influence stopped and HEAD read once more — it
 * must still be the commit the gates judged, which is the commit published.
 */
async function implementAndCheck(
	a: Attempt,
	s: Resolved,
	ws: Workspace,
): Promise<{ sha: string; work: Work; provider: string }> {
	const { deps, timeline } = a;
	const { repo, deadlineAt } = s;
	const limits = s.config.limits;
	const commands = {
		env: commandEnv(deps.env),
		deadlineAt,
		user: a.scope.user,
		signal: a.heartbeat.signal,
	};
	const guardrails = freshGuardrails(
		await deps.store.guardrails(repo.name).catch(() => []),
		Date.now(),
	);
	// Where setup ran; cleared when the agent's processes (setup's services among them) are stopped.
	const setUp = new Set<string>();
	let retry: RetryContext | undefined;
	const ctx: ImplementContext = {
		...chainContext(a, s.config, deadlineAt),
		ws,
		nativeWorktree: repo.native_worktree === true,
		async setup(dir) {
			if (setUp.has(dir) || !repo.setup.length) return;
			setUp.add(dir);
			const failure = await runCommands(repo.setup, {
				cwd: dir,
				keepBackground: true,
				...commands,
			});
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
	const pinned = async (work: Work) =>
		ws.pin(work).catch((err) => {
			throw new StepFailure(
				`could not take the agent's commits for publishing: ${(err as Error).message}`,
				false,
				"gate",
			);
		});

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
		const judged = await pinned(work);
		const facts = await workFacts(ws, work, judged, repo, deps.secrets);
		let problems = gates(facts);
		if (!problems.length) problems = await validate(work, repo, commands, timeline);
		a.heartbeat.check();
		if (!problems.length) {
			await stopAgent(a);
			setUp.clear();
			const head = await ws.head(work);
			if (head === judged) {
				await validation({ agentRuns: n, status: "passed" });
				return { sha: judged, work, provider: done.spec };
			}
			problems = gates({ ...facts, moved: [judged, head] });
		}
		const failure = problems.some((p) => p.kind === "validation") ? "validation" : "gate";
		a.lesson ??= {
			failure,
			summary: problems.map((p) => p.lesson).join("; "),
			provider: done.spec,
		};
		const final = n >= maxRuns;
		await reportProblems(a, problems, { n, maxRuns, final, failure });
		if (final) throw new StepFailure(problemsText(problems), false, failure);
		retry = { run: n + 1, final: n + 1 >= maxRuns, problems };
	}
}

/** A round's problems on the step (validation state) and the timeline. */
async function reportProblems(
	a: Attempt,
	problems: readonly CheckProblem[],
	r: { n: number; maxRuns: number; final: boolean; failure: "validation" | "gate" },
): Promise<void> {
	const summary = problems.map((p) => p.summary).join("; ");
	await a.heartbeat.write({
		validation: {
			agentRuns: r.n,
			status: r.final ? "failed" : "checking",
			lastFailure: headTail(redact(summary, a.deps.secrets), 1000),
		},
	});
	const output = problems.flatMap((p) => (p.output ? [p.output] : [])).join("\n");
	await a.timeline.add(
		r.failure === "validation" ? "validation.failed" : "gate.refused",
		`${summary}${r.final ? "" : `; running the agent again (${r.n + 1} of ${r.maxRuns})`}`,
		output ? { output } : undefined,
	);
}

/**
 * Kills every process the agent could influence — its CLI's leftovers, setup's services, what
 * validate started — found by the agent's user or the attempt's mark, so nothing of the agent's
 * is alive while the task reads the commit to publish and pushes it.
 */
export async function stopAgent(a: Attempt): Promise<void> {
	const pids = await stopAgentProcesses(a.scope);
	if (pids.length)
		await a.timeline.add(
			"agent.processes_stopped",
			`stopped ${pids.length} process${pids.length === 1 ? "" : "es"} the agent left running`,
			{ pids },
		);
}

/**
 * Pushes the pinned commit to the step's branch and opens (or updates) its pull request, once a
 * heartbeat written now confirms the step is still this attempt's. The manifest's title and body
 * are the agent's words: redacted like everything else that leaves the task.
 */
async function publish(
	a: Attempt,
	s: Resolved,
	ws: Workspace,
	work: Work,
	sha: string,
): Promise<string> {
	const manifest = await readManifest(work.manifestDir);
	const secrets = a.deps.secrets;
	await a.heartbeat.confirm();
	await ws.publish.push(sha, s.branch).catch((err) => {
		throw new StepFailure(
			`push failed: ${(err as Error).message}`,
			isTransientFailure(String(err)),
			"publish",
		);
	});
	await a.timeline.add("publish.pushed", `pushed ${sha.slice(0, 12)} to ${s.branch}`, { sha });
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
		throw new StepFailure(
			`opening the pull request failed: ${(err as Error).message}`,
			status === undefined || isTransientStatus(status),
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
	return pr.url;
}
