import type { Octokit } from "octokit";
import type { TimelineEventType } from "../../../domain/events";
import { workSteps } from "../../../domain/run";
import type { TaskStore } from "../../../store";
import { type RelatedPr, withRelated } from "./body";

// A multi-repo run's pull requests link each other: a step's PR lists the ones opened before it
// (its task writes the body), and once the step's report is in, the pipeline gives every PR of the
// run the full list (its marked section rewritten, so a redelivered report never adds a link
// twice). The pipeline does it: a step's token may write its own repository only
// (docs/trackers.md › As a GitHub App (a token per step)).

/** Where the linking notes what it did: the run's timeline. */
export interface Notes {
	add(type: TimelineEventType, message: string, data?: Record<string, unknown>): Promise<void>;
}

/** The run's pull requests in its other steps, as recorded now. */
export async function siblingPrs(
	store: Pick<TaskStore, "getRun">,
	runId: string,
	index: number,
): Promise<RelatedPr[]> {
	const run = await store.getRun(runId);
	return run
		? workSteps(run).flatMap((s) =>
				s.index !== index && s.prUrl ? [{ repo: s.repo, url: s.prUrl }] : [],
			)
		: [];
}

function locate(url: string): { owner: string; repo: string; pull_number: number } | undefined {
	const m = url.match(/\/([^/]+)\/([^/]+)\/pull\/(\d+)\/?$/);
	return m ? { owner: m[1] as string, repo: m[2] as string, pull_number: Number(m[3]) } : undefined;
}

/**
 * Brings every PR of the run up to date with the others' links (best effort: a failure is noted,
 * the step still succeeds — its own PR is open).
 */
export async function linkRelated(
	octokit: Octokit,
	prs: readonly RelatedPr[],
	timeline: Notes,
): Promise<void> {
	if (prs.length < 2) return;
	for (const pr of prs) {
		const where = locate(pr.url);
		if (!where) continue;
		try {
			const { data } = await octokit.rest.pulls.get(where);
			const body = data.body ?? "";
			const next = withRelated(body, prs, pr.url);
			if (next === body) continue;
			await octokit.rest.pulls.update({ ...where, body: next });
			await timeline.add("publish.related", `linked ${pr.url} to the run's other pull requests`);
		} catch (err) {
			await timeline.add(
				"publish.related_failed",
				`could not link ${pr.url} to the run's other pull requests: ${(err as Error).message}`,
			);
		}
	}
}
