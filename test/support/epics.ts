import { ulid } from "ulid";
import type { EpicTaskState } from "../../src/domain/epic";
import { newRun, type Run } from "../../src/domain/run";

// Epic runs written straight into a store (docs/epics.md › Epics): a diamond of four tasks in every
// state a running epic shows, and the run of one of its tasks. What the API and the dashboard
// must leave out is marked, so a test can look for it.

/** In every task body and the research text: the answer must not carry them. */
export const HIDDEN = "SECRET-BODY-TEXT";

/** 01 → 02, 03 → 04: 01 done, 02 running, 03 failed, 04 blocked by 03. */
function diamondTasks(ids: { running: string; done: string }, title01 = "Add the model") {
	const task = (
		id: string,
		title: string,
		repo: string,
		dependsOn: string[],
		state: Partial<EpicTaskState> & Pick<EpicTaskState, "status">,
	): EpicTaskState => ({
		id,
		title,
		repo,
		goal: `goal of ${id}`,
		doneWhen: `done when ${id}`,
		dependsOn,
		file: `tasks/${id}-task.md`,
		body: `# Task ${Number(id)}: ${title}\n${HIDDEN}`,
		...state,
	});
	const issue = (n: number) => ({
		id: `sub-${n}`,
		key: `ENG-${900 + n}`,
		url: `https://linear.app/acme/issue/ENG-${900 + n}`,
	});
	return [
		task("01", title01, "api", [], {
			status: "done",
			issue: issue(1),
			runId: ids.done,
			prUrls: ["https://github.com/acme/api/pull/71"],
		}),
		task("02", "Serve it over HTTP", "api", ["01"], {
			status: "running",
			issue: issue(2),
			runId: ids.running,
		}),
		task("03", "Show it on the page", "web", ["01"], {
			status: "failed",
			issue: issue(3),
			reason: "the agent gave up",
		}),
		task("04", "Document it", "api", ["02", "03"], {
			status: "blocked",
			issue: issue(4),
			reason: "blocked by 03",
		}),
	];
}

/** An epic run in its tasks phase with the diamond, and the run of its task 02. */
export function diamondEpic(opts: { now?: string; title01?: string; issueKey?: string } = {}) {
	const now = opts.now ?? new Date().toISOString();
	const epicId = ulid();
	const taskRunId = ulid();
	const doneRunId = ulid();
	const epic: Run = {
		...newRun({
			runId: epicId,
			source: "linear",
			issueId: `epic-${epicId}`,
			issueKey: opts.issueKey ?? "ENG-900",
			trigger: "api",
			now,
		}),
		title: "Reports, end to end",
		url: "https://linear.app/acme/issue/ENG-900",
		status: "running",
		epic: {
			research: { text: `## Overview\n${HIDDEN}` },
			plan: `## Overview\n${HIDDEN}`,
			tasks: diamondTasks({ running: taskRunId, done: doneRunId }, opts.title01),
			comment: { claimed: true, id: "comment-1" },
			// A stack's sweeper sends a running epic a pass every second; held by another pass, the
			// fixture stays as written (its tasks' runs and sub-issues exist only here).
			lease: { id: "held-by-the-test", until: "2999-01-01T00:00:00.000Z" },
		},
	};
	const task: Run = {
		...newRun({
			runId: taskRunId,
			source: "linear",
			issueId: "sub-2",
			issueKey: "ENG-902",
			trigger: "epic",
			now,
		}),
		title: "Serve it over HTTP",
		status: "running",
		epicTask: {
			runId: epicId,
			taskId: "02",
			repo: "api",
			dependencies: [{ id: "01", title: "Add the model", repo: "api", prs: [] }],
		},
	};
	return { epic, task };
}
