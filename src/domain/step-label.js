// @ts-check
/** @import { Step } from "./run" */

// One numbering of a run's steps for people (docs/multi-repo.md › Multi-repo runs): the planning
// step is "plan", the steps that change a repository count from 1 whether a plan ran or not — as
// the tracker's comments have always said "step 1 of 2". The API keeps the 0-based `index`; the
// CLI, the timeline's messages and the dashboard say this. Plain JavaScript with its types in
// JSDoc (checked by tsc like the TypeScript around it), so the browser loads this very file: the
// dashboard imports it (src/api/assets.ts serves it as /js/domain/step-label.js). It imports
// nothing at run time.

/** @typedef {Pick<Step, "index" | "kind" | "repo">} Labelled */

/**
 * What a step that changes no repository is called: planning, or an epic's phase
 * (docs/epics.md › Epics).
 * @type {Record<NonNullable<Step["kind"]>, string>}
 */
const PHASES = {
	plan: "plan",
	research: "research",
	epic_plan: "plan",
};

/**
 * "plan" (or "research"), or the step's place among the steps that change a repository: "1", "2"…
 * @param {readonly Labelled[]} steps
 * @param {number} index
 * @returns {string}
 */
export function stepNumber(steps, index) {
	const kind = steps.find((s) => s.index === index)?.kind;
	if (kind) return PHASES[kind];
	const at = steps.filter((s) => !s.kind).findIndex((s) => s.index === index);
	// A step the list does not hold (never in a stored run): its index, counted from 1.
	return String(at < 0 ? index + 1 : at + 1);
}

/**
 * "plan", or "step 2 (web)": how a message names a step.
 * @param {readonly Labelled[]} steps
 * @param {number} index
 * @returns {string}
 */
export function stepLabel(steps, index) {
	const number = stepNumber(steps, index);
	if (steps.find((s) => s.index === index)?.kind) return number;
	const repo = steps.find((s) => s.index === index)?.repo;
	return repo ? `step ${number} (${repo})` : `step ${number}`;
}
