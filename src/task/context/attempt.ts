import { type LisaConfig, parseModelSpec, type RepoConfig } from "../../config/schema";
import { costingOf } from "../../domain/cost";
import type { RoundInput } from "../../domain/follow-up";
import type { Guardrail } from "../../domain/guardrails";
import {
	branchName,
	type IssueSnapshot,
	previousSteps,
	type Run,
	type Step,
} from "../../domain/run";
import { isTransientFailure } from "../../domain/transient";
import type { AgentRunUsage } from "../../domain/usage";
import type { LaunchRepo } from "../../launcher/launcher";
import type { Logger } from "../../log";
import type { Queue } from "../../queue/sqs";
import type { TaskStore } from "../../store";
import { BudgetWatch } from "../agents/budget-watch";
import type { ChainContext } from "../agents/chain";
import { stepDeadline } from "../agents/supervision";
import type { Broker } from "../broker/broker";
import type { Confinement } from "../egress/confine";
import type { PreviousStep } from "../prompts/prompt";
import { StepFailure } from "../report/failure";
import type { Heartbeat } from "../report/heartbeat";
import type { Timeline } from "../report/timeline";
import { Git, gitEnv } from "../sandbox/git";
import { type AgentScope, stopAgentProcesses } from "../sandbox/identity";
import { launchedRepo } from "./repos";

// The attempt's context: what the task was given (its dependencies, the request, the launched
// repositories), what it read from the run, and what every step builds from them.

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
	/** The model broker the attempt's agents reach their model APIs through. */
	broker?: Broker;
	/** The agent's confined network, with LISA_AGENT_NETWORK=allow-list. */
	egress?: Confinement;
}

/** What an implementation step works on: its repository, branch and deadline. */
export interface ImplementInputs {
	config: LisaConfig;
	issue: IssueSnapshot;
	step: Step;
	repo: RepoConfig & { slug: string };
	branch: string;
	/**
	 * What the work starts from and the gates judge against: the repo's base branch, or a round's
	 * pull request branch (only the round's own commits are judged and pushed).
	 */
	base: string;
	/** A follow-up round on the run's pull request (docs/follow-ups.md › Follow-ups). */
	round?: RoundInput;
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

/** The step's repository (as configured, where the launch says it is), branch and deadline. */
export function implementInputs(a: Attempt): ImplementInputs {
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
	const round = a.run.round;
	if (round && round.repo !== configured.name)
		throw new StepFailure(
			`the round is for repo "${round.repo}", not the step's "${configured.name}"`,
			false,
			"config",
		);
	// A round continues the pull request's branch: it starts from its head and pushes onto it.
	const branch =
		round?.branch ??
		branchName(config.branch_prefix, issue.key ?? a.run.issueKey ?? a.run.issueId, issue.title);
	return {
		config,
		issue,
		step,
		repo: { ...configured, url, slug },
		branch,
		base: round ? round.branch : configured.base_branch,
		...(round ? { round } : {}),
		deadlineAt: deadlineOf(config, step),
		previous: previousSteps(a.run, a.req.stepIndex),
	};
}

/** What every agent run of the attempt shares: the config's models and limits, the attempt's supervision. */
export function chainContext(
	a: Attempt,
	config: LisaConfig,
	deadlineAt: number,
): Omit<ChainContext, "scratchDir"> {
	const limits = config.limits;
	const budget = a.run.steps[a.req.stepIndex]?.budget;
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
		broker: a.broker,
		// Model spend only: compute is priced by the pipeline.
		...(budget
			? {
					budget: new BudgetWatch(
						budget,
						costingOf(config, undefined).prices,
						a.agentRuns,
						a.timeline,
					),
				}
			: {}),
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
