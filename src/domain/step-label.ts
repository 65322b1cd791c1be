import type { Step } from "./run";

// One numbering of a run's steps for people (docs/multi-repo.md › Multi-repo runs): the planning
// step is "plan", the steps that change a repository count from 1 whether a plan ran or not — as
// the tracker's comments have always said "step 1 of 2". The API keeps the 0-based `index`; the
// CLI, the timeline's messages and the dashboard (its mirror is checked against this in
// test/e2e/dashboard-served.test.ts and dashboard-live.test.ts) say this.

type Labelled = Pick<Step, "index" | "kind" | "repo">;

/**
 * What a step that changes no repository is called: planning, or an epic's phase
 * (docs/epics.md › Epics).
 */
const PHASES: Record<NonNullable<Step["kind"]>, string> = {
	plan: "plan",
	research: "research",
	epic_plan: "plan",
};

/** "plan" (or "research"), or the step's place among the steps that change a repository: "1", "2"… */
export function stepNumber(steps: readonly Labelled[], index: number): string {
	const kind = steps.find((s) => s.index === index)?.kind;
	if (kind) return PHASES[kind];
	const at = steps.filter((s) => !s.kind).findIndex((s) => s.index === index);
	// A step the list does not hold (never in a stored run): its index, counted from 1.
	return String(at < 0 ? index + 1 : at + 1);
}

/** "plan", or "step 2 (web)": how a message names a step. */
export function stepLabel(steps: readonly Labelled[], index: number): string {
	const number = stepNumber(steps, index);
	if (steps.find((s) => s.index === index)?.kind) return number;
	const repo = steps.find((s) => s.index === index)?.repo;
	return repo ? `step ${number} (${repo})` : `step ${number}`;
}
