import { epicPhase } from "../domain/epic-steps";
import type { EpicRun, Run } from "../domain/run";

// What the API shows of an epic (docs/epics.md › Epics): its phase and task graph. No task bodies
// (each up to 4 KB, the sub-issues hold them) and no research text: the answer stays small enough
// to send with every change of the run on its stream.

/** The epic's phase, questions and tasks, as the run answer's `epic` and GET /api/epics/:id show them. */
export function epicProgress(run: EpicRun) {
	const { epic } = run;
	const tasks = epic.tasks.map((t) => ({
		id: t.id,
		title: t.title,
		repo: t.repo,
		dependsOn: t.dependsOn,
		status: t.status,
		...(t.issue ? { issue: { key: t.issue.key, url: t.issue.url } } : {}),
		...(t.runId ? { runId: t.runId } : {}),
		...(t.prUrls?.length ? { prUrls: t.prUrls } : {}),
		...(t.reason ? { reason: t.reason } : {}),
	}));
	return {
		phase: epicPhase(run) ?? "research",
		...(epic.research?.needsSpec?.length ? { questions: epic.research.needsSpec } : {}),
		tasks,
		done: tasks.filter((t) => t.status === "done").length,
		total: tasks.length,
		...(epic.continues ? { continues: epic.continues } : {}),
	};
}

/** GET /api/epics/:id: the epic run's issue, status and progress. */
export function epicView(run: EpicRun) {
	return {
		id: run.runId,
		status: run.status,
		issueKey: run.issueKey,
		title: run.title,
		url: run.url,
		...(run.error ? { error: run.error } : {}),
		createdAt: run.createdAt,
		updatedAt: run.updatedAt,
		...epicProgress(run),
	};
}

/** Why a run is not an epic, for GET /api/epics/:id's 404. */
export function notAnEpic(run: Exclude<Run, EpicRun>): string {
	if (run.epicTask)
		return `run ${run.runId} is not an epic: it is task ${run.epicTask.taskId} of epic ${run.epicTask.runId}`;
	return `run ${run.runId} is not an epic: it is an issue's run`;
}
