// Epics (docs/epics.md › Epics): an issue planned into dependent tasks, each a sub-issue worked as
// its own run in dependency order. The phases' files and the plan's graph are checked here,
// deterministically; nothing here knows the tracker, the queue or the task container.

import * as z from "zod";

/** The files each phase writes, relative to the epic's directory in the task's workspace. */
export const RESEARCH_FILE = "research.md";
export const PLAN_FILE_MD = "plan.md";
export const TASKS_DIR = "tasks";
/** A task file's name in TASKS_DIR: its number (the task's id), a slug, `.md`. */
export const TASK_FILE_NAME = /^(\d{1,4})-[a-z0-9-]{1,80}\.md$/;

/** The sections research.md must have, each non-empty (the order is the template's). */
export const RESEARCH_SECTIONS = [
	"Overview",
	"Relevant Files",
	"Existing Patterns",
	"Dependencies",
	"Recommendations",
] as const;

/** The section research.md carries instead of a plannable answer: the questions to ask. */
export const NEEDS_SPEC_SECTION = "Needs Spec";

/** The sections plan.md must have, each non-empty. */
export const PLAN_SECTIONS = ["Overview", "Tasks", "Dependencies"] as const;

/** The sections each task file must have, each non-empty ("None" is a valid Dependencies). */
export const TASK_SECTIONS = [
	"Goal",
	"Repository",
	"Files",
	"Steps",
	"Done When",
	"Dependencies",
] as const;

/** Bounds that keep a phase's report within one queue message and the run within one item. */
export const EPIC_LIMITS = {
	researchBytes: 24_000,
	planBytes: 8_000,
	taskBytes: 4_000,
	maxTasks: 15,
	/** Entries of tasks/ read at most: a few more than the tasks allowed, to name the excess. */
	taskEntries: 30,
	questions: 10,
	/** A Needs Spec question, and a task's title, at most (characters). */
	questionChars: 300,
	titleChars: 200,
} as const;

/** What the research phase concluded. */
export interface EpicResearch {
	/** research.md as written (bounded by `EPIC_LIMITS.researchBytes`). */
	text: string;
	/** Set when the research says the description is not enough to plan: the questions to ask. */
	needsSpec?: string[];
}

/** One task of the plan, from its file `tasks/NN-slug.md`. */
export interface EpicTask {
	/** The file's leading number, as written ("01"). */
	id: string;
	/** From the file's `# Task N: <title>` heading. */
	title: string;
	/** A configured repository's name (the `## Repository` section). */
	repo: string;
	/** The `## Goal` section. */
	goal: string;
	/** The `## Done When` section. */
	doneWhen: string;
	/** Task ids that must be done first (plan.md's `## Dependencies`, which each task file repeats). */
	dependsOn: string[];
	/** The file's path under the epic's directory: `tasks/01-add-the-model.md`. */
	file: string;
	/** The whole file (bounded by `EPIC_LIMITS.taskBytes`): the sub-issue's body and its run's prompt. */
	body: string;
}

/** What the plan phase wrote, checked. */
export interface EpicPlan {
	/** plan.md as written. */
	text: string;
	/** In the order to create them: every task after the tasks it depends on. */
	tasks: EpicTask[];
}

/** A phase's files, checked: what it wrote, or every reason it is not done (shown to the next attempt). */
export type PhaseVerdict<T> = { ok: true; value: T } | { ok: false; missing: string[] };

/**
 * Where a task of a running epic is: planned (not in the tracker yet); waiting (its sub-issue exists,
 * for its dependencies); running (its run is active); in_review (its run succeeded, its pull
 * requests wait to be merged, when `source_config.merged` is set); done; failed; cancelled (its run
 * was, as when its epic was cancelled); blocked (a task it depends on failed or was cancelled: it will
 * not start). Each follows the task's run, whether the epic still runs or ended.
 */
export const EPIC_TASK_STATUSES = [
	"planned",
	"waiting",
	"running",
	"in_review",
	"done",
	"failed",
	"cancelled",
	"blocked",
] as const;
export type EpicTaskStatus = (typeof EPIC_TASK_STATUSES)[number];

/** The sub-issue a task became. */
export interface CreatedIssue {
	id: string;
	key?: string;
	url?: string;
}

/** A task of a running epic: its plan, its sub-issue and its current run. */
export interface EpicTaskState extends EpicTask {
	status: EpicTaskStatus;
	/** Recorded as soon as it is created, before the next task's: never created twice. */
	issue?: CreatedIssue;
	/** Its sub-issue was being created: a pass that finds no `issue` looks it up before creating it. */
	creating?: boolean;
	/** Its `blocks` relations were made. */
	related?: boolean;
	/** Done, and ticked where the epic lists its tasks as items (Trello's checklist). */
	ticked?: boolean;
	/** Its current run (a retried epic starts a failed task's run anew). */
	runId?: string;
	/** Its pull requests, once its run opened them. */
	prUrls?: string[];
	/** Why it failed, or which failed task blocks it. */
	reason?: string;
}

/**
 * An epic run's progress, kept on its run item (docs/epics.md › Epics). Its phase is
 * `epicPhase(run)`.
 */
export interface EpicState {
	research?: EpicResearch;
	/** plan.md, once the plan phase passed its checks. */
	plan?: string;
	tasks: EpicTaskState[];
	/**
	 * The epic run whose plan the tasks are: the key of each sub-issue's marker. A continued epic
	 * keeps its first run's, so its sub-issues are found again, never created twice.
	 */
	origin?: string;
	/** The epic run this one continues (a retry keeps the plan and the sub-issues). */
	continues?: string;
	/** The run that continues this one: its tasks' runs report there, and only it may be continued. */
	continuedBy?: string;
	/** The run's slot was given back when its tasks began: the tasks' runs take slots of their own. */
	released?: boolean;
	/** Held by the one `epic.advance` pass at work; `again` asks it for one more pass. */
	lease?: { id: string; until: string; again?: boolean };
	/** The epic issue's one progress comment, edited in place: claimed before it is posted. */
	comment?: { claimed: true; id?: string; text?: string };
}

/** A task's id: the number its file starts with. */
const taskIdSchema = z.string().regex(/^\d{1,4}$/, "a task id is a number");

/** The checked phases as the task reports them (the `step.finished` message), bounded like the checks. */
export const epicResearchSchema = z.object({
	text: z.string().max(EPIC_LIMITS.researchBytes),
	needsSpec: z
		.array(z.string().min(1).max(EPIC_LIMITS.questionChars))
		.min(1)
		.max(EPIC_LIMITS.questions)
		.optional(),
});

const epicTaskSchema = z.object({
	id: taskIdSchema,
	title: z.string().min(1).max(EPIC_LIMITS.titleChars),
	repo: z.string().min(1).max(200),
	goal: z.string().min(1).max(EPIC_LIMITS.taskBytes),
	doneWhen: z.string().min(1).max(EPIC_LIMITS.taskBytes),
	dependsOn: z.array(taskIdSchema).max(EPIC_LIMITS.maxTasks),
	file: z
		.string()
		.refine(
			(f) => f.startsWith(`${TASKS_DIR}/`) && TASK_FILE_NAME.test(f.slice(TASKS_DIR.length + 1)),
			"a task file is tasks/NN-slug.md",
		),
	body: z.string().max(EPIC_LIMITS.taskBytes),
});

export const epicPlanSchema = z.object({
	text: z.string().max(EPIC_LIMITS.planBytes),
	tasks: z.array(epicTaskSchema).min(1).max(EPIC_LIMITS.maxTasks),
});
