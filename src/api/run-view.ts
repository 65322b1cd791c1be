import { prUrls, type Run, workSteps } from "../domain/run";
import { sumUsage } from "../domain/usage";
import type { ApiDeps } from "./deps";

/** What the API shows of a run: no config snapshot, no issue text. */
export function runView(run: Run, deps: Pick<ApiDeps, "runUrl" | "now">) {
	const { config: _config, issue: _issue, version: _version, ...rest } = run;
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
		links: {
			dashboard: deps.runUrl(run.runId),
			events: `/api/runs/${run.runId}/events`,
			stream: `/api/runs/${run.runId}/stream`,
		},
	};
}
