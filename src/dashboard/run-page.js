// @ts-check
/** @import { EventAnswer, RunAnswer } from "../api/answers" */
/** @import { Notice } from "./run-actions.js" */
import { out } from "./api.js";
import { doing } from "./doing.js";
import { epicParts } from "./epic.js";
import { ACTIVE, duration, errorClass, money, runDuration, tokensOf, when } from "./format.js";
import { html } from "./html.js";
import { badge, cost, link, relative, tick } from "./parts.js";
import { actions, approval, notice } from "./run-actions.js";
import { atEnd, output, timeline, toEnd } from "./run-events.js";
import { runLinks } from "./run-links.js";
import { steps } from "./run-steps.js";
import { follow } from "./stream.js";
import { show } from "./view.js";

// A run's page (`/runs/<id>`): it follows the run's stream and is drawn again in place as the run
// goes on (docs/dashboard.md › Dashboard): its status and what it is doing, its cost, the approval it
// waits for, what the token may do, its links, its epic, its steps, the agent's output and the
// timeline.

/**
 * What the page knows of the run, from its stream.
 * @typedef {object} RunState
 * @property {RunAnswer | null} run
 * @property {EventAnswer[]} events
 * @property {string | null | undefined} lastId The last timeline event's id: the stream goes on from it.
 * @property {boolean} ended
 * @property {number} missing How many times the stream said there is no such run (yet).
 * @property {boolean} waiting
 * @property {Notice | null} notice What an action answered: kept until dismissed.
 * @property {() => void} draw Draws the page again, at the next frame.
 */

/** "Cost $1.84 (model $1.50, compute $0.34) · 12k tokens · 3m 0s agent time · limit $10.00". @param {RunAnswer} r */
function costLine(r) {
	const c = r.cost;
	const all = r.costWithFollowUps;
	const parts =
		c.totalUsd === null
			? ` (at least ${money(c.knownUsd)}: ${c.unknown.join("; ")})`
			: ` (model ${money(c.modelUsd ?? 0)}, compute ${money(c.computeUsd)})`;
	const time = ` · ${Math.round(tokensOf(c) / 1000)}k tokens · ${duration(c.agentSeconds)} agent time`;
	const limit = r.limitUsd == null ? "" : ` · limit ${money(r.limitUsd)}`;
	return html`Cost ${cost(c)}${parts}${time}${limit}${all ? " · with its follow-up rounds " : ""}${all ? cost(all) : ""}`;
}

/** @param {RunState} state */
function page(state) {
	const r = state.run;
	if (!r) return state.waiting ? html`<p class="muted">Waiting for the run to start…</p>` : null;
	const active = ACTIVE.includes(r.status);
	const error = r.status === "cancelled" ? `Cancelled: ${r.error}` : r.error;
	return html`
		<h2 id="heading">${r.issueKey || r.issueId} ${r.title || ""}</h2>
		<p id="summary">${badge(r.status)} · ${active ? doing(r) : duration(runDuration(r))} · started ${relative(r.createdAt)} by ${r.trigger}${r.url ? " · " : ""}${r.url ? link(r.url, "issue") : ""}</p>
		<div id="why">${r.error ? html`<p id="run-error" class=${errorClass(r.status)}>${error}</p>` : null}</div>
		<p id="cost">${costLine(r)}</p>
		<div id="approvals">${(r.approvals || []).map(
			(a) =>
				html`<p class="muted approved">${`Approved by ${a.by} (${a.via}) ${when(a.at)}: limit ${money(a.limitUsd)} at ${money(a.spentUsd)} spent`}</p>`,
		)}</div>
		<div id="approval-slot">${approval(state)}</div>
		<p id="actions">${actions(state)}</p>
		${notice(state)}
		<div id="links">${runLinks(r)}</div>
		<div id="epic">${epicParts(r)}</div>
		<h3>Steps</h3>
		<table id="steps">${steps(r)}</table>
		<h3>Agent output</h3>
		<pre class="tail" id="output">${output(state.events, active)}</pre>
		<h3>Timeline</h3>
		<table id="timeline">${timeline(state.events, r.steps)}</table>
	`;
}

/** Shows run `id`, live until it ended. @param {string} id */
export async function runPage(id) {
	/** @type {HTMLElement} */ (document.getElementById("where")).textContent = `run ${id}`;
	let pending = false;
	/** @type {RunState} */
	const state = {
		run: null,
		events: [],
		lastId: null,
		ended: false,
		missing: 0,
		waiting: false,
		notice: null,
		draw: () => {
			if (pending) return;
			pending = true;
			requestAnimationFrame(() => {
				pending = false;
				if (out()) return;
				// At the end of the output before the new lines: the pane follows them.
				const following = atEnd();
				show(() => page(state));
				if (following) toEnd();
				tick();
			});
		},
	};
	// Active durations tick between updates.
	setInterval(() => state.run && !state.ended && state.draw(), 1000);
	await follow(id, state, state.draw);
}
