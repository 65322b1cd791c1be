import { prUrls, type Run, workSteps } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import { sumUsage } from "../domain/usage";
import type { ApiDeps } from "./deps";
import type { RunAnswer } from "./schemas";

/** A round of the run's follow-ups, as the API answers it (its status when it was read). */
type FollowUpView = RunAnswer["followUps"][number];

/**
 * What the API shows of a run: no config snapshot, no issue text, none of what a round answers
 * (CI output, review comments: untrusted text) but its pull request, branch and number.
 */
export function runView(
	run: Run,
	deps: Pick<ApiDeps, "runUrl" | "now">,
	statuses: ReadonlyMap<string, Run["status"]> = new Map(),
) {
	const {
		config: _config,
		issue: _issue,
		version: _version,
		request: _request,
		round,
		followUps,
		...rest
	} = run;
	const work = workSteps(run);
	const end = run.finishedAt ? Date.parse(run.finishedAt) : deps.now().getTime();
	return {
		id: run.runId,
		...rest,
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
		followUps: (followUps?.rounds ?? []).map(
			(r): FollowUpView => ({
				runId: r.runId,
				trigger: r.trigger,
				prUrl: r.prUrl,
				at: r.at,
				...(statuses.has(r.runId) ? { status: statuses.get(r.runId) } : {}),
			}),
		),
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
 * One run as GET /api/runs/:id and its stream show it: with its rounds' statuses (at most
 * follow_up.max_rounds), read now. `known` keeps them between a stream's looks: a round that
 * ended is not read again.
 */
export async function runDetailView(
	run: Run,
	deps: Pick<ApiDeps, "runUrl" | "now" | "store">,
	known = new Map<string, Run["status"]>(),
) {
	const unsettled = (run.followUps?.rounds ?? []).filter((r) => {
		const status = known.get(r.runId);
		return status === undefined || !isTerminalRun(status);
	});
	await Promise.all(
		unsettled.map(async (r) => {
			const round = await deps.store.getRun(r.runId);
			if (round) known.set(r.runId, round.status);
		}),
	);
	return runView(run, deps, known);
}
