// @ts-check
/** @import { RunAnswer, StepAnswer } from "../api/answers" */
import { stepLabel } from "../domain/step-label.js";
import { duration, runDuration } from "./format.js";
import { html } from "./html.js";
import { badge } from "./parts.js";

// What an active run is doing, in the runs list and on its page, its steps numbered as everywhere
// else: by src/domain/step-label.js itself, the module the server's code imports.

const ENDED_STEP = ["succeeded", "failed", "cancelled"];

/**
 * The agent's state while its step runs; once the step ended, a live state ("in_progress") is
 * stale and not shown (the step's own badge says how it ended).
 * @param {StepAnswer} s
 */
export const agentOf = (s) =>
	!s.agentState ||
	(ENDED_STEP.includes(s.status) && !["stuck", "crashed", "completed"].includes(s.agentState))
		? ""
		: s.agentState;

/**
 * The step under way (or next), its agent's state, how far the run is ("1 of 2 done") and for how
 * long; a run before its first step says its status.
 * @param {RunAnswer} r
 */
export function doing(r) {
	const live =
		r.steps.find((s) => s.status === "running" || s.status === "launching") ||
		r.steps.find((s) => s.status === "pending");
	// The steps that change a repository: not a plan's, not an epic's research or plan.
	const work = r.steps.filter((s) => !s.kind);
	const done = work.filter((s) => s.status === "succeeded").length;
	const agent = live ? agentOf(live) : "";
	const now = live ? `${stepLabel(r.steps, live.index)} · ${live.status}` : r.status;
	const far = work.length > 1 ? ` · ${done} of ${work.length} done` : "";
	return html`<span class="doing">${now}${agent ? " · agent " : ""}${agent ? badge(agent) : ""}${far}${` · ${duration(runDuration(r))}`}</span>`;
}
