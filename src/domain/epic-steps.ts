import type { EpicPlan, EpicResearch, EpicState, EpicTaskState } from "./epic";
import { checkPlan, checkResearch } from "./epic-files";
import type { Run } from "./run";

// An epic's phase steps as the pipeline accepts them (docs/epics.md › Epics): what the task reports
// is checked again with the very checks the task ran (it is not trusted), and becomes the epic's
// state.

export type Accepted<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/** research.md as reported, checked again: the research, or why it is refused. */
export function acceptResearch(reported: EpicResearch | undefined): Accepted<EpicResearch> {
	if (!reported) return { ok: false, errors: ["the research step reported no research"] };
	const verdict = checkResearch(reported.text);
	return verdict.ok ? verdict : { ok: false, errors: verdict.missing };
}

/** The plan as reported, checked again from its files: the epic with its tasks, or why not. */
export function acceptEpicPlan(run: Run, reported: EpicPlan | undefined): Accepted<EpicState> {
	if (!reported) return { ok: false, errors: ["the plan step reported no plan"] };
	const repos = run.config?.repos.map((r) => r.name) ?? [];
	const verdict = checkPlan(
		{
			plan: { text: reported.text },
			tasks: reported.tasks.map((t) => ({ file: t.file, text: t.body })),
		},
		repos,
		run.config?.epic.max_tasks ?? 1,
	);
	if (!verdict.ok) return { ok: false, errors: verdict.missing };
	const tasks: EpicTaskState[] = verdict.value.tasks.map((t) => ({ ...t, status: "planned" }));
	return {
		ok: true,
		value: { ...run.epic, plan: verdict.value.text, tasks, origin: run.epic?.origin ?? run.runId },
	};
}

export const EPIC_PHASES = [
	"research",
	"plan",
	"tasks",
	"needs_spec",
	"done",
	"failed",
	"cancelled",
] as const;
export type EpicPhase = (typeof EPIC_PHASES)[number];

/** Where an epic run is, from its steps and state (undefined for a run that is not an epic). */
export function epicPhase(run: Pick<Run, "status" | "steps" | "epic">): EpicPhase | undefined {
	if (!run.epic) return undefined;
	if (run.epic?.research?.needsSpec) return "needs_spec";
	if (run.status === "succeeded") return "done";
	if (run.status === "failed") return "failed";
	if (run.status === "cancelled") return "cancelled";
	if (run.epic?.tasks.length) return "tasks";
	return run.steps.some((s) => s.kind === "epic_plan") ? "plan" : "research";
}
