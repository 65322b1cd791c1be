import type { LisaConfig } from "../config/schema";
import {
	approvalComment,
	approvalRequest,
	limitOf,
	type RunMoney,
	resumeOf,
	spentUsd,
} from "../domain/budget";
import { attemptSpentUsd, costingOf, runSpentUsd, usd } from "../domain/cost";
import { failPatch } from "../domain/progress";
import type { ApprovalRequest, Run, Step } from "../domain/run";
import type { PipelineDeps } from "./deps";
import { finalize } from "./finalize";
import { mutate, note } from "./mutate";
import { sayOnIssueAndPullRequests } from "./report";

// Budgets that pause and ask (docs/cost.md › Cost and budgets): a run past
// `limits.max_run_cost_usd` waits `awaiting_approval` until someone says yes (the API, `/lisa
// continue`, the Linear session) or the request expires; a day past `limits.daily_budget_usd` keeps
// new runs queued.

/** The runs of a pull request's follow-up rounds, oldest first (read at once). */
export async function roundRuns(deps: PipelineDeps, parent: Run): Promise<Run[]> {
	const runs = await Promise.all(
		(parent.followUps?.rounds ?? []).map((r) => deps.store.getRun(r.runId)),
	);
	return runs.filter((r): r is Run => r !== undefined);
}

/** What the run may spend: its limit, and what its pull request's other runs spent. */
export async function moneyOf(deps: PipelineDeps, run: Run): Promise<RunMoney | undefined> {
	const config = run.config;
	if (!config) return undefined;
	const parent = run.parentRunId ? await deps.store.getRun(run.parentRunId) : undefined;
	const others = parent
		? [parent, ...(await roundRuns(deps, parent)).filter((r) => r.runId !== run.runId)]
		: [];
	const othersUsd = others.reduce((sum, r) => sum + runSpentUsd(r), 0);
	return {
		costing: costingOf(config, deps.taskSize),
		limitUsd: limitOf(run, parent),
		othersUsd,
		stepUsd: config.limits.max_run_cost_usd,
	};
}

/**
 * Before a step's launch: the run's budget as the task watches it, or, when the run has spent its
 * limit, the pause that keeps the step pending for an approval.
 */
export function launchBudget(
	run: Run,
	index: number,
	money: RunMoney | undefined,
	now: string,
): { budget?: Step["budget"]; pause?: ApprovalRequest } {
	if (!money || !Number.isFinite(money.limitUsd)) return {};
	const spent = spentUsd(run, money);
	if (spent < money.limitUsd) return { budget: { limitUsd: money.limitUsd, spentUsd: spent } };
	return { pause: approvalRequest(run, [index], spent, money, now, resumeOf(run)) };
}

/** The run just paused (or a pause was not yet said): said on its timeline, issue and pull requests. */
export async function askApproval(deps: PipelineDeps, run: Run): Promise<void> {
	const request = run.approval;
	if (run.status !== "awaiting_approval" || !request || request.said) return;
	const claimed = await mutate(deps, run.runId, (r) =>
		r.approval?.requestedAt !== request.requestedAt || r.approval.said
			? {}
			: { patch: { set: { approval: { ...r.approval, said: true } } } },
	);
	if (!claimed?.changed) return;
	await note(
		deps,
		run.runId,
		"run.awaiting_approval",
		`spent ${usd(request.spentUsd)} of its ${usd(request.limitUsd)} limit: waiting for approval`,
		{ data: { ...request } },
	);
	const parent = run.parentRunId ? await deps.store.getRun(run.parentRunId) : undefined;
	const prs = run.round ? [run.round.prUrl] : run.steps.flatMap((s) => (s.prUrl ? [s.prUrl] : []));
	await sayOnIssueAndPullRequests(
		deps,
		parent ?? run,
		prs,
		approvalComment(request, deps.runUrl(run.runId)),
		"elicitation",
	);
}

/** The sweeper's look at a paused run: said, or failed once its request expired. */
export async function sweepPaused(deps: PipelineDeps, run: Run): Promise<void> {
	const request = run.approval;
	if (run.status !== "awaiting_approval" || !request) return;
	const hours = run.config?.limits.approval_timeout_hours ?? 72;
	const expired = Date.parse(request.requestedAt) + hours * 3_600_000 <= deps.now().getTime();
	if (!expired) return askApproval(deps, run);
	const reason = `nobody approved spending past ${usd(request.limitUsd)} within ${hours} h (limits.approval_timeout_hours): the run had spent ${usd(request.spentUsd)}`;
	const now = deps.now().toISOString();
	const res = await mutate(deps, run.runId, (r) => {
		if (r.status !== "awaiting_approval") return {};
		const fail = failPatch(r, now, reason);
		return { patch: { ...fail, set: { ...fail.set, approval: undefined } } };
	});
	if (!res?.changed) return;
	await note(deps, run.runId, "run.failed", reason);
	await finalize(deps, run.runId);
}

/** The attempt's cost in the daily budget's ledger, on the day it ended (once per attempt). */
export async function recordSpend(
	deps: PipelineDeps,
	run: Run,
	stepIndex: number,
	attempt: number,
): Promise<void> {
	const step = run.steps[stepIndex];
	const entry = step?.usage?.find((u) => u.attempt === attempt);
	if (!step || !entry?.cost || !entry.endedAt) return;
	const spent = attemptSpentUsd(entry.cost);
	if (spent <= 0) return;
	await deps.store.addSpend(
		entry.endedAt.slice(0, 10),
		`${run.runId}#${stepIndex}#${attempt}`,
		spent,
		step.repo,
	);
}

/**
 * Why a new run waits for the daily budget (`limits.daily_budget_usd`, a repository's
 * `daily_budget_usd`), or undefined. It starts when the next UTC day begins or the budget is raised:
 * the sweeper asks again every pass.
 */
export async function dailyBudgetWait(
	deps: PipelineDeps,
	config: LisaConfig,
	repo: string | undefined,
): Promise<string | undefined> {
	const all = config.limits.daily_budget_usd;
	const own = config.repos.find((r) => r.name === repo)?.daily_budget_usd;
	if (all === undefined && own === undefined) return undefined;
	const spent = await deps.store.spentOn(deps.now().toISOString().slice(0, 10));
	const mine = repo ? (spent.byRepo[repo] ?? 0) : 0;
	const over =
		all !== undefined && spent.totalUsd >= all
			? `${usd(spent.totalUsd)} of the daily budget of ${usd(all)} (limits.daily_budget_usd)`
			: own !== undefined && mine >= own
				? `${usd(mine)} of ${repo}'s daily budget of ${usd(own)} (repos[].daily_budget_usd)`
				: undefined;
	return over
		? `waiting for the daily budget: today's runs spent ${over}; starts after 00:00 UTC or when the budget is raised`
		: undefined;
}

/** The daily budget's wait, said once on the run's timeline and in the tracker. */
export async function sayDailyWait(
	deps: PipelineDeps,
	run: Run,
	issueId: string,
	why: string,
): Promise<undefined> {
	const claimed = await mutate(deps, run.runId, (r) =>
		r.tracker.budgetWait || r.status !== "queued"
			? {}
			: { patch: { set: { tracker: { ...r.tracker, budgetWait: true } } } },
	);
	if (!claimed?.changed) return undefined;
	await note(deps, run.runId, "run.waiting", why);
	// The issue as the tracker names it: the run's snapshot is taken once it starts.
	await sayOnIssueAndPullRequests(
		deps,
		{ ...run, issueId },
		[],
		`Lisa will start on this later: ${why}.\n\n[Run](${deps.runUrl(run.runId)})`,
		"thought",
	);
	return undefined;
}
