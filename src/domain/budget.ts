import { type Costing, runSpentUsd, usd } from "./cost";
import type { Decision } from "./progress";
import type { Approval, ApprovalRequest, Run, RunPatch, Step } from "./run";
import { nextRunStatus } from "./states";

// Budgets that pause and ask (docs/cost.md › Cost and budgets). Pure: the handlers read what a
// run's pull request's other rounds spent, and apply the patches with one conditional write.

/** What a run may spend and what was spent besides its own steps (its pull request's other runs). */
export interface RunMoney {
	costing: Costing;
	/** The effective limit: raised by approvals, else `limits.max_run_cost_usd`. */
	limitUsd: number;
	/** What the run that opened the pull request and its other rounds spent. */
	othersUsd: number;
	/** How much an approval without a limit adds: `limits.max_run_cost_usd`. */
	stepUsd: number;
}

/** The effective limit of a run: the highest of its approvals', its pull request's run's and its config's. */
export function limitOf(run: Pick<Run, "limitUsd" | "config">, parent?: Pick<Run, "limitUsd">) {
	const configured = run.config?.limits.max_run_cost_usd ?? Number.POSITIVE_INFINITY;
	return Math.max(run.limitUsd ?? 0, parent?.limitUsd ?? 0, configured);
}

/** What the run and its pull request's other runs spent, as a budget counts it (`runSpentUsd`). */
export const spentUsd = (run: Pick<Run, "steps">, money: Pick<RunMoney, "othersUsd">) =>
	money.othersUsd + runSpentUsd(run);

export function approvalRequest(
	run: Run,
	steps: number[],
	spent: number,
	money: RunMoney,
	now: string,
	resume: ApprovalRequest["resume"],
): ApprovalRequest {
	const earlier = run.approval?.steps ?? [];
	return {
		requestedAt: run.approval?.requestedAt ?? now,
		spentUsd: spent,
		limitUsd: money.limitUsd,
		proposedLimitUsd: Math.round((spent + money.stepUsd) * 100) / 100,
		steps: [...new Set([...earlier, ...steps])].sort((a, b) => a - b),
		resume: run.approval?.resume ?? resume,
	};
}

/** The run pauses (or stays paused) with these steps waiting pending for the approval. */
export function pausePatch(
	run: Pick<Run, "status">,
	request: ApprovalRequest,
	steps: Record<number, Partial<Step>> = {},
) {
	const status =
		run.status === "awaiting_approval" ? run.status : nextRunStatus(run.status, "pause");
	return { set: { status, approval: request }, steps } satisfies RunPatch;
}

/** What an approved run goes back to: planning while its plan is not accepted, else work. */
export const resumeOf = (run: Pick<Run, "status">): ApprovalRequest["resume"] =>
	run.status === "planning" ? "planning" : "running";

/** What a step waits as: its next attempt, pending, with nothing of the stopped one. */
const nextAttempt = (step: Step, patch: Partial<Step>, error: string): Partial<Step> => ({
	...patch,
	status: "pending",
	attempt: step.attempt + 1,
	error,
	taskId: undefined,
	agentState: undefined,
	heartbeatAt: undefined,
	report: undefined,
	launchedAt: undefined,
	notBefore: undefined,
	finishedAt: undefined,
});

export type BudgetDecision =
	| Decision
	| { kind: "pause"; patch: RunPatch; request: ApprovalRequest; stepIndex: number };

/**
 * Applies the run's budget to what a step's report decided: a task stopped at the limit, a retry or
 * the next steps past it pause the run instead (nothing is lost: the steps wait pending); a run
 * already paused keeps what would start for the approval. Launched steps learn the budget.
 */
export function withBudget(
	run: Run,
	decision: Decision,
	/** The step whose task stopped its agent at the limit (its report's `budget`). */
	stopped: number | undefined,
	money: RunMoney,
	now: string,
): BudgetDecision {
	if (decision.kind === "ignore") return decision;
	const after = applySteps(run, decision.patch);
	const spent = spentUsd({ steps: after }, money);
	const over = spent >= money.limitUsd;
	const paused = run.status === "awaiting_approval";
	const resume = resumeOf(run);

	if (decision.kind === "finish") {
		const current = stopped === undefined ? undefined : run.steps[stopped];
		if (!current || decision.outcome !== "failed") return decision;
		// The task stopped at the limit: its step waits for the next attempt instead of failing.
		const request = approvalRequest(run, [current.index], spent, money, now, resume);
		const own = decision.patch.steps?.[current.index] ?? {};
		return {
			kind: "pause",
			stepIndex: current.index,
			request,
			patch: pausePatch(run, request, {
				[current.index]: nextAttempt(
					current,
					{ usage: own.usage },
					budgetError(current, spent, money),
				),
			}),
		};
	}
	if (decision.kind === "retry") {
		if (!over && !paused) return withLaunchBudget(decision, [decision.stepIndex], spent, money);
		const current = run.steps[decision.stepIndex] as Step;
		const own = decision.patch.steps?.[decision.stepIndex] ?? {};
		const request = approvalRequest(run, [decision.stepIndex], spent, money, now, resume);
		return {
			kind: "pause",
			stepIndex: decision.stepIndex,
			request,
			patch: pausePatch(run, request, {
				[decision.stepIndex]: {
					...nextAttempt(current, { usage: own.usage }, own.error ?? "transient failure"),
					attempt: decision.attempt,
				},
			}),
		};
	}
	// advance
	if (!decision.launch.length || (!over && !paused))
		return withLaunchBudget(decision, decision.launch, spent, money);
	const request = approvalRequest(
		run,
		decision.launch,
		spent,
		money,
		now,
		decision.plan ? "running" : resume,
	);
	const hold = (s: Step): Step =>
		decision.launch.includes(s.index) ? { ...s, status: "pending", launchedAt: undefined } : s;
	const patch: RunPatch = decision.patch.replaceSteps
		? {
				set: { ...decision.patch.set, ...pausePatch(run, request).set },
				replaceSteps: decision.patch.replaceSteps.map(hold),
			}
		: pausePatch(
				run,
				request,
				Object.fromEntries(
					Object.entries(decision.patch.steps ?? {}).filter(
						([i]) => !decision.launch.includes(Number(i)),
					),
				),
			);
	return { kind: "pause", stepIndex: decision.launch[0] as number, request, patch };
}

const budgetError = (step: Step, spent: number, money: RunMoney) =>
	`attempt ${step.attempt} stopped: the run's cost reached ${usd(spent)} of its ${usd(money.limitUsd)} limit`;

/** The steps launched now carry the run's limit and what was spent, for the task's watch. */
function withLaunchBudget<D extends Decision & { patch: RunPatch }>(
	decision: D,
	launch: number[],
	spent: number,
	money: RunMoney,
): D {
	if (!launch.length || !Number.isFinite(money.limitUsd)) return decision;
	const budget = { limitUsd: money.limitUsd, spentUsd: spent };
	const patch = decision.patch;
	if (patch.replaceSteps)
		return {
			...decision,
			patch: {
				...patch,
				replaceSteps: patch.replaceSteps.map((s) =>
					launch.includes(s.index) ? { ...s, budget } : s,
				),
			},
		};
	const steps = { ...patch.steps };
	for (const i of launch) steps[i] = { ...steps[i], budget };
	return { ...decision, patch: { ...patch, steps } };
}

/** The run's steps as the patch leaves them. */
function applySteps(run: Run, patch: RunPatch): Step[] {
	if (patch.replaceSteps) return patch.replaceSteps;
	return [
		...run.steps.map((s) => ({ ...s, ...patch.steps?.[s.index] })),
		...(patch.appendSteps ?? []),
	];
}

/** The comment asking for approval, on the issue and the pull request. */
export function approvalComment(request: ApprovalRequest, runUrl: string): string {
	const more = Math.max(0, request.proposedLimitUsd - request.spentUsd);
	return [
		`Lisa paused this run: it spent ${usd(request.spentUsd)} of its ${usd(request.limitUsd)} limit (limits.max_run_cost_usd).`,
		`Reply \`/lisa continue\` or approve it in the dashboard to go on, up to another ${usd(more)}. Without an answer the run fails when the approval expires.`,
		"",
		`[Run](${runUrl})`,
	].join("\n");
}

/**
 * Why a comment's yes approves nothing: a comment approves at most once, and only a request that
 * existed when it was written (a comment sent again later never answers a newer request).
 */
export function commentRefusal(
	request: Pick<ApprovalRequest, "requestedAt">,
	approvals: readonly Pick<Approval, "commentId">[],
	comment: { id: string; writtenAt?: string },
): string | undefined {
	if (approvals.some((a) => a.commentId === comment.id))
		return `${comment.id} already approved a request`;
	if (comment.writtenAt === undefined) return `${comment.id} says no time it was written`;
	// GitHub's times are whole seconds: a comment of the request's own second may read as older and be
	// refused (it says why; a new comment approves). Never the other way: an older one never counts.
	if (Date.parse(comment.writtenAt) < Date.parse(request.requestedAt))
		return `${comment.id} was written at ${comment.writtenAt}, before the request of ${request.requestedAt}`;
	return undefined;
}
