import type { EpicState, EpicTaskState } from "./epic";
import type { Run } from "./run";

// `lisa plan --continue` / a retry of an epic run (docs/epics.md › Epics): the new run keeps the
// plan, the sub-issues and their relations, the progress comment and every task done or in review;
// a task that failed or was cancelled, or still showed running when the epic ended, gets a new run,
// and the tasks it blocked wait for it again. Pure.

/** The epic state a continuing run starts from. */
export function continueEpic(previous: Run): EpicState {
	const epic = previous.epic as EpicState;
	return {
		research: epic.research,
		plan: epic.plan,
		tasks: epic.tasks.map(again),
		origin: epic.origin ?? previous.runId,
		continues: previous.runId,
		...(epic.comment?.id ? { comment: epic.comment } : {}),
	};
}

function again(task: EpicTaskState): EpicTaskState {
	if (!["failed", "cancelled", "blocked", "running"].includes(task.status)) return task;
	const { runId: _run, prUrls: _prs, reason: _reason, ...rest } = task;
	return { ...rest, status: task.issue ? "waiting" : "planned" };
}
