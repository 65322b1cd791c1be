// @ts-check
/** @import { StatsAnswer } from "../api/answers" */
/** @import { Kid } from "./html.js" */
import { api } from "./api.js";
import { charts } from "./charts.js";
import { dollars, duration, pct } from "./format.js";
import { html, render } from "./html.js";

// The stats header over every page: runs and success rate over 30 days, time to PR, agent time and
// the cost (GET /api/stats); the charts of its days under it, but on a run's page.

const bar = /** @type {HTMLElement} */ (document.getElementById("stats"));

/** @param {string} label @param {Kid} value */
const stat = (label, value) => html`<div class="stat"><b>${value}</b><span>${label}</span></div>`;

export async function stats() {
	/** @type {StatsAnswer} */
	const s = await api("/api/stats");
	if (!location.pathname.startsWith("/runs/")) charts(s);
	const c = s.counts;
	// An unknown part (a model without a price) leaves the known part as a floor.
	const spent =
		s.cost.totalUsd == null ? `≥ ${dollars(s.cost.knownUsd)}` : dollars(s.cost.totalUsd);
	render(
		[
			stat("runs, 30 days", s.total),
			stat("active", c.queued + c.planning + c.running + c.awaiting_approval),
			stat("succeeded", c.succeeded),
			stat("failed", c.failed),
			stat("success rate", pct(s.successRate)),
			stat("time to PR, median", duration(s.timeToPr.medianSeconds)),
			stat("time to PR, p90", duration(s.timeToPr.p90Seconds)),
			stat("agent time", duration(s.agentSeconds)),
			stat("cost, 30 days", spent),
			stat("per successful run", dollars(s.costPerSucceededRun)),
			stat("per merged PR", dollars(s.costPerMergedPr)),
		],
		bar,
	);
}

/** Empties the header: the page was signed out. */
export const clearStats = () => render(null, bar);
