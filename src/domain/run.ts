import type { LisaConfig, RepoConfig, SourceName } from "../config/schema";
import type { StepChanges } from "./changes";
import type { EpicPlan, EpicResearch, EpicState } from "./epic";
import type { EpicTaskLink } from "./epic-link";
import {
	FOLLOW_UP_TRIGGERS,
	type FollowUpState,
	type RoundInput,
	type RoundReport,
} from "./follow-up";
import type { Plan } from "./plan";
import { type AgentState, nextStepStatus, type RunStatus, type StepStatus } from "./states";
import type { AttemptUsage, StepAttemptUsage } from "./usage";

/** What started a run: a request, its epic (a task whose dependencies are done), or a follow-up round on its parent's pull request. */
export const TRIGGERS = ["webhook", "poll", "api", "retry", "epic", ...FOLLOW_UP_TRIGGERS] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** The issue as the agent sees it (title and description are untrusted input). */
export interface IssueSnapshot {
	id: string;
	key?: string;
	title: string;
	description: string;
	url?: string;
	/** Linear team id, Trello board id, GitHub owner/name. */
	teamId?: string;
}

/** What the task reports about one attempt, kept on the step so a lost queue message can be re-sent. */
export interface StepReport {
	attempt: number;
	outcome: "succeeded" | "failed";
	branch?: string;
	prUrl?: string;
	/** The title the step's pull request was opened with. */
	prTitle?: string;
	/** What the published commit changed (a follow-up round: the round's own change). */
	changes?: StepChanges;
	error?: string;
	transient?: boolean;
	provider?: string;
	/** A planning step's validated plan. */
	plan?: Plan;
	/** An epic's research phase: research.md, checked. */
	research?: EpicResearch;
	/** An epic's plan phase: plan.md and the tasks, checked. */
	epicPlan?: EpicPlan;
	/** What the attempt's agents used. */
	usage?: AttemptUsage;
	/** A follow-up round's outcome: its summary, replies, or that nothing needed changing. */
	round?: RoundReport;
	/**
	 * The run's cost reached its limit: the task stopped the agent (docs/cost.md › Cost and budgets).
	 */
	budget?: StepBudget;
	at: string;
}

/** How the task's checks of the agent's work went (written by the task, shown by the API). */
interface StepValidation {
	/** Agent runs in this attempt: the first one plus validation retries. */
	agentRuns: number;
	status: "checking" | "passed" | "failed";
	/** The problems found by the last failed check (redacted, bounded). */
	lastFailure?: string;
}

/** A step that changes no repository: a multi-repo plan, an epic's research or plan. */
export const STEP_KINDS = ["plan", "research", "epic_plan"] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export interface Step {
	index: number;
	/** A configured repo's name; `*` for the planning step. */
	repo: string;
	/**
	 * A step whose agent writes files, not code, over read-only checkouts of every repo: a
	 * multi-repo run's plan, or an epic's research and plan phases (docs/epics.md › Epics).
	 */
	kind?: StepKind;
	scope?: string;
	/** The plan's order: a step starts when every step of a lower order succeeded. */
	order?: number;
	status: StepStatus;
	attempt: number;
	taskId?: string;
	provider?: string;
	agentState?: AgentState;
	heartbeatAt?: string;
	branch?: string;
	prUrl?: string;
	/** The title its pull request was opened with (from the succeeded attempt's report). */
	prTitle?: string;
	/** What its published commit changed (docs/http-api.md › What a step changed). */
	changes?: StepChanges;
	error?: string;
	launchedAt?: string;
	/** A retry waiting out its backoff (pending): not launched before this time. */
	notBefore?: string;
	finishedAt?: string;
	report?: StepReport;
	validation?: StepValidation;
	/** What each attempt's agents used and cost, per attempt that ended. */
	usage?: StepAttemptUsage[];
	/**
	 * Set at launch: the run's limit and what it (with its pull request's other rounds) had spent,
	 * so the task stops its agent when the attempt's spend takes it past the limit.
	 */
	budget?: StepBudget;
}

/** A run's cost limit and what it had spent: at a step's launch, or when the task stopped its agent. */
export interface StepBudget {
	limitUsd: number;
	spentUsd: number;
}

/** A run paused because its cost passed its limit (docs/cost.md › Cost and budgets). */
export interface ApprovalRequest {
	requestedAt: string;
	spentUsd: number;
	limitUsd: number;
	/** The limit an approval without one sets: what was spent plus `limits.max_run_cost_usd`. */
	proposedLimitUsd: number;
	/** The steps launched when approved (pending meanwhile). */
	steps: number[];
	/** What the run goes back to. */
	resume: "planning" | "running";
	/** The request is said on the issue and the pull request. */
	said?: boolean;
}

export interface Approval {
	/** A GitHub login, "api", or a Linear user's name: a label where `byId` is set. */
	by: string;
	/** The id of the Linear user who said yes in the agent session. */
	byId?: string;
	via: "api" | "github" | "linear";
	at: string;
	limitUsd: number;
	/** What the run had spent when approved. */
	spentUsd: number;
	/** The request it answered, and the steps it launched. */
	requestedAt: string;
	steps: number[];
	/** The comment (or Linear session message) that said yes: each approves once. */
	commentId?: string;
}

/** Which tracker side effects are done, so a redelivered message resumes instead of repeating. */
export interface TrackerProgress {
	/** Nothing to do in the tracker (the run lost the issue lock to another run). */
	skip?: boolean;
	/**
	 * Nothing at all in the tracker, not even in the run's agent session: the issue (or session) no
	 * longer waited for Lisa when the run's webhook reached the intake.
	 */
	untouched?: boolean;
	started?: boolean;
	finalStatus?: boolean;
	links?: boolean;
	labelRemoved?: boolean;
	finalComment?: boolean;
	/** Linear agent session: the first `thought` (and the run link) is posted. */
	acknowledged?: boolean;
	/** The "Lisa is working on it" comment (or session action) is posted. */
	startComment?: boolean;
	/** A multi-repo run's accepted plan is posted (comment or session action). */
	planComment?: boolean;
	/** Linear agent session: the final `response` or `error` is posted. */
	sessionFinal?: boolean;
	/** The issue moved to `source_config.merged` after every PR merged. */
	merged?: boolean;
	/** The tasks of steps cancelled with the finished run are stopped. */
	tasksStopped?: boolean;
	/** A round's summary comment on its pull request is posted. */
	roundComment?: boolean;
	/** A round's replies to the review threads are posted. */
	replies?: boolean;
	/** A review round asked its reviewers again. */
	reviewRequested?: boolean;
	/** The wait for the daily budget is said in the tracker (docs/cost.md › Cost and budgets). */
	budgetWait?: boolean;
	/** The finished run is counted in its day's stats (docs/http-api.md › Statistics). */
	counted?: boolean;
	/** A vague epic got the needs-spec label (docs/epics.md › Epics). */
	needsSpec?: boolean;
	/** Every effect of the finished run is done and the issue lock released. */
	done?: boolean;
}

/** A pull request of the run that was closed, merged or not (from GitHub's webhook). */
interface PullRequestClosed {
	url: string;
	merged: boolean;
	at: string;
	by?: string;
	mergeCommitSha?: string;
}

/** A follow-up message written in the run's Linear agent session. */
export interface SessionPrompt {
	id: string;
	body: string;
	author?: string;
	at: string;
}

/** What every run has, whatever its kind. */
interface RunBase {
	runId: string;
	source: SourceName;
	issueId: string;
	issueKey?: string;
	title?: string;
	url?: string;
	trigger: Trigger;
	status: RunStatus;
	steps: Step[];
	version: number;
	createdAt: string;
	updatedAt: string;
	finishedAt?: string;
	error?: string;
	deliveryId?: string;
	/** A multi-repo run's plan, once the planning step's plan was accepted. */
	plan?: Plan;
	/** Snapshot taken when the run was planned: a config change never alters a run in flight. */
	config?: LisaConfig;
	issue?: IssueSnapshot;
	tracker: TrackerProgress;
	/** Set when the run was started by delegating the issue to Lisa's Linear app. */
	agentSessionId?: string;
	/** The newest follow-ups of the agent session (bounded: the run is one item of at most 400 KB). */
	prompts?: SessionPrompt[];
	/** How many older follow-ups were dropped from `prompts`. */
	promptsDropped?: number;
	closedPullRequests?: PullRequestClosed[];
	/**
	 * Set while the run waits queued: for one of `limits.max_concurrent_runs` slots, or for the
	 * issue's previous run to finish its tracker updates.
	 */
	waitingSince?: string;
	/** How often the sweeper sent the run's request again because its intake had stopped. */
	intakeRedrives?: number;
	/** What asked for the run besides the issue: the mention or prompt that created a Linear session (untrusted). */
	request?: { text: string; author?: string };
	/** The run that opened a pull request: its follow-up rounds, pending and done. */
	followUps?: FollowUpState;
	/** The run's cost limit when an approval raised it over `limits.max_run_cost_usd`. */
	limitUsd?: number;
	/** Set while the run is `awaiting_approval`. */
	approval?: ApprovalRequest;
	/** Every yes to spending more, in order. */
	approvals?: Approval[];
}

/**
 * An issue's run: one repository's step, or a multi-repo run's plan and its steps
 * (docs/multi-repo.md › Multi-repo runs). Any kind of run may come from a Linear agent session.
 */
export interface IssueRun extends RunBase {
	epic?: undefined;
	epicTask?: undefined;
	round?: undefined;
	parentRunId?: undefined;
}

/**
 * An epic's run, from its creation: it plans the issue into sub-issues and works them in order
 * (docs/epics.md › Epics). Not `kind`, which the store keeps for what an item is.
 */
export interface EpicRun extends RunBase {
	epic: EpicState;
	epicTask?: undefined;
	round?: undefined;
	parentRunId?: undefined;
}

/** The run of an epic's task: the epic's run, the task, and what its dependencies did. */
interface EpicTaskRun extends RunBase {
	epicTask: EpicTaskLink;
	epic?: undefined;
	round?: undefined;
	parentRunId?: undefined;
}

/** A follow-up round on the pull request its parent run opened (docs/follow-ups.md › Follow-ups). */
interface RoundRun extends RunBase {
	/** The pull request, branch and everything the round answers. */
	round: RoundInput;
	/** The run that opened the pull request it works on. */
	parentRunId: string;
	epic?: undefined;
	epicTask?: undefined;
}

/**
 * A run is one of these kinds, told apart by the field only that kind has (`epic`, `epicTask`,
 * `round`): checking it gives the kind's other fields.
 */
export type Run = IssueRun | EpicRun | EpicTaskRun | RoundRun;

export type RunKind = "issue" | "epic" | "epic_task" | "round";

export function kindOf(run: Run): RunKind {
	if (run.epic) return "epic";
	if (run.epicTask) return "epic_task";
	if (run.round) return "round";
	return "issue";
}

export const isIssueRun = (run: Run): run is IssueRun => kindOf(run) === "issue";

type RunFields = Omit<Run, "runId" | "steps" | "version" | "createdAt">;

/** A change to one run item; the store applies it as one version-checked conditional update. */
export interface RunPatch {
	set?: Partial<RunFields>;
	steps?: Record<number, Partial<Step>>;
	appendSteps?: Step[];
	/**
	 * The whole list at once, for a change that both updates and adds steps (DynamoDB refuses one
	 * update touching `steps[0].x` and `steps`). Safe: the update is version-checked like any other.
	 */
	replaceSteps?: Step[];
}

export function newRun(input: {
	runId: string;
	source: SourceName;
	issueId: string;
	issueKey?: string;
	trigger: Trigger;
	deliveryId?: string;
	agentSessionId?: string;
	request?: Run["request"];
	now: string;
}): IssueRun {
	return {
		runId: input.runId,
		source: input.source,
		issueId: input.issueId,
		issueKey: input.issueKey,
		trigger: input.trigger,
		deliveryId: input.deliveryId,
		...(input.agentSessionId ? { agentSessionId: input.agentSessionId } : {}),
		...(input.request ? { request: input.request } : {}),
		status: "queued",
		steps: [],
		version: 0,
		createdAt: input.now,
		updatedAt: input.now,
		tracker: {},
	};
}

/** Slug of a title for branch names: lowercase words joined by '-', at most `max` characters. */
export function slugify(text: string, max = 40): string {
	const slug = text
		.normalize("NFKD")
		.replace(/[\u0300-\u036f]/g, "")
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, "-")
		.replace(/^-+|-+$/g, "");
	if (slug.length <= max) return slug;
	const cut = slug.slice(0, max);
	if (slug[max] === "-") return cut; // the cut falls on a word boundary
	const lastDash = cut.lastIndexOf("-");
	return (lastDash > max / 2 ? cut.slice(0, lastDash) : cut).replace(/-+$/, "");
}

/** `<branch_prefix><issue-key lowercase>-<slug ≤40>` (docs/config.md › Config, `branch_prefix`). */
export function branchName(prefix: string, issueKey: string, title: string): string {
	const key = slugify(issueKey, 64);
	const slug = slugify(title);
	return `${prefix}${slug ? `${key}-${slug}` : key}`;
}

/** The original CLI's repo rule: a repo whose match hint starts the title, else the first repo. */
export function pickRepo(config: LisaConfig, title: string): RepoConfig {
	const lower = title.toLowerCase();
	const hit = config.repos.find((r) => r.match.some((m) => m && lower.startsWith(m.toLowerCase())));
	const repo = hit ?? config.repos[0];
	if (!repo) throw new Error("no repos configured");
	return repo;
}

export function newStep(index: number, repo: string, scope?: string): Step {
	return { index, repo, scope, status: "pending", attempt: 1 };
}

export const PLAN_REPO = "*";

/** The first step of a run with several repos configured: an agent plans, the steps follow. */
export function planStep(index: number): Step {
	return { ...newStep(index, PLAN_REPO), kind: "plan" };
}

/**
 * A step whose agent reads every configured repo and writes files, not code: every step with a
 * kind (a multi-repo run's plan, an epic's research and plan phases, docs/epics.md › Epics). It
 * changes no repository.
 */
export const readsAllRepos = (step: Pick<Step, "kind">): boolean => step.kind !== undefined;

/** What a step's task does on its repositories, which is what its code host token may do. */
export type RepoAccess = "read" | "write" | "follow-up";

/** A planning or epic phase reads; a follow-up round also reads its pull request's CI; any other step writes. */
export function repoAccess(run: Pick<Run, "round">, step: Pick<Step, "kind">): RepoAccess {
	if (readsAllRepos(step)) return "read";
	return run.round ? "follow-up" : "write";
}

/** The steps that change a repository (all but the planning and epic phases). */
export function workSteps(run: { readonly steps: readonly Step[] }): Step[] {
	return run.steps.filter((s) => !readsAllRepos(s));
}

/** A step's place in the plan; a run without a plan has one step. */
export const orderOf = (step: Step): number => step.order ?? 1;

/**
 * What the earlier orders of the plan produced, for a step's prompt
 * (docs/multi-repo.md › Multi-repo runs).
 */
export function previousSteps(
	run: Pick<Run, "steps">,
	index: number,
): { repo: string; branch?: string; prUrl?: string }[] {
	const step = run.steps[index];
	if (!step || readsAllRepos(step)) return [];
	return workSteps(run)
		.filter((s) => orderOf(s) < orderOf(step) && s.status === "succeeded")
		.map((s) => ({ repo: s.repo, branch: s.branch, prUrl: s.prUrl }));
}

export function prUrls(run: Run): string[] {
	return run.steps.flatMap((s) => (s.prUrl ? [s.prUrl] : []));
}

export function stepStatusAfter(
	step: Step,
	event: Parameters<typeof nextStepStatus>[1],
): StepStatus {
	return nextStepStatus(step.status, event);
}
