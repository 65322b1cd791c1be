import { limitOf } from "../domain/budget";
import { type Cost, runCost, stepCost, sumCosts } from "../domain/cost";
import { kindOf, prUrls, type Run, type RunKind, type Step, workSteps } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import { sumUsage } from "../domain/usage";
import type { ApiDeps } from "./deps";
import { epicProgress } from "./epic-view";
import type { RunAnswer } from "./schemas";

/** A round of the run's follow-ups, as the API answers it (its status when it was read). */
type FollowUpView = RunAnswer["followUps"][number];

/** A follow-up round as it was read: its status and what it cost. */
export interface RoundSeen {
	status: Run["status"];
	cost: Cost;
}

/** The run's cost limit as the pipeline applies it; before the run has a config snapshot, the current config's. */
function limitShown(run: Run, deps: Pick<ApiDeps, "config">): number | null {
	if (run.config) return limitOf(run);
	const state = deps.config();
	return state.status === "ok" ? state.config.limits.max_run_cost_usd : null;
}

/**
 * The answer's `kind`: "epic" for an epic run, "task" for the run of an epic's task, absent for
 * the others (docs/http-api.md › HTTP API).
 */
const KIND_SHOWN: Partial<Record<RunKind, "epic" | "task">> = { epic: "epic", epic_task: "task" };

/** A step's report without an epic phase's files (the research and the task bodies: long, and the issue's). */
function reportShown(report: Step["report"]) {
	if (!report) return undefined;
	const { research: _research, epicPlan: _plan, ...shown } = report;
	return shown;
}

/**
 * What the API shows of a run: no config snapshot, no issue text, none of what a round answers
 * (CI output, review comments: untrusted text) but its pull request, branch and number; of an
 * epic, its phase and task graph without the tasks' bodies or the research. Its cost is its own
 * steps' (docs/http-api.md › HTTP API); with `rounds` read, also the cost with its rounds.
 */
export function runView(
	run: Run,
	deps: Pick<ApiDeps, "runUrl" | "now" | "config">,
	rounds?: ReadonlyMap<string, RoundSeen>,
) {
	const {
		config: _config,
		issue: _issue,
		version: _version,
		request: _request,
		round,
		followUps,
		epic: _epic,
		epicTask,
		...rest
	} = run;
	const kind = KIND_SHOWN[kindOf(run)];
	const work = workSteps(run);
	const cost = runCost(run);
	const roundList = followUps?.rounds ?? [];
	const end = run.finishedAt ? Date.parse(run.finishedAt) : deps.now().getTime();
	return {
		id: run.runId,
		...rest,
		...(kind ? { kind } : {}),
		...(run.epic ? { epic: epicProgress(run) } : {}),
		// Where it reports, not what its dependencies did (their titles and files are the agent's text).
		...(epicTask ? { epicTask: { runId: epicTask.runId, taskId: epicTask.taskId } } : {}),
		steps: run.steps.map((s) => ({ ...s, report: reportShown(s.report), cost: stepCost(s) })),
		cost,
		...(rounds && roundList.length
			? {
					costWithFollowUps: sumCosts([
						cost,
						...roundList.flatMap((r) => {
							const seen = rounds.get(r.runId);
							return seen ? [seen.cost] : [];
						}),
					]),
				}
			: {}),
		limitUsd: limitShown(run, deps),
		repos: [...new Set(work.map((s) => s.repo))],
		provider: run.steps.findLast((s) => s.provider)?.provider ?? null,
		durationSeconds: Math.max(0, Math.round((end - Date.parse(run.createdAt)) / 1000)),
		usage: sumUsage(run.steps.flatMap((s) => s.usage ?? []).map((u) => u.total)),
		prUrls: prUrls(run),
		...(round
			? {
					round: {
						number: round.number,
						prUrl: round.prUrl,
						branch: round.branch,
						headSha: round.headSha,
					},
				}
			: {}),
		followUps: roundList.map((r): FollowUpView => {
			const status = rounds?.get(r.runId)?.status;
			return {
				runId: r.runId,
				trigger: r.trigger,
				prUrl: r.prUrl,
				at: r.at,
				...(status ? { status } : {}),
			};
		}),
		pendingFollowUps: (followUps?.pending ?? []).map((p) => ({
			prUrl: p.prUrl,
			trigger: p.trigger,
			dueAt: p.dueAt,
		})),
		...(followUps?.stopped ? { followUpsStopped: followUps.stopped } : {}),
		links: {
			dashboard: deps.runUrl(run.runId),
			events: `/api/runs/${run.runId}/events`,
			stream: `/api/runs/${run.runId}/stream`,
		},
	};
}

/**
 * One run as GET /api/runs/:id and its stream show it: with its rounds' statuses and costs (at
 * most follow_up.max_rounds), read now. `known` keeps them between a stream's looks: a round that
 * ended is not read again.
 */
export async function runDetailView(
	run: Run,
	deps: Pick<ApiDeps, "runUrl" | "now" | "config"> & { store: Pick<ApiDeps["store"], "getRun"> },
	known = new Map<string, RoundSeen>(),
) {
	const unsettled = (run.followUps?.rounds ?? []).filter((r) => {
		const status = known.get(r.runId)?.status;
		return status === undefined || !isTerminalRun(status);
	});
	await Promise.all(
		unsettled.map(async (r) => {
			const round = await deps.store.getRun(r.runId);
			if (round) known.set(r.runId, { status: round.status, cost: runCost(round) });
		}),
	);
	return runView(run, deps, known);
}
