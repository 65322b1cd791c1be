// @ts-check
/** @import { RunAnswer } from "../api/answers" */
import { when } from "./format.js";
import { html } from "./html.js";
import { link, prLinks } from "./parts.js";

// What a run's page links to (docs/follow-ups.md › Follow-ups): its pull requests, its follow-up
// rounds (or the run it is a round of), the rounds to come or stopped, and its plan.

/** @param {RunAnswer} r */
export function runLinks(r) {
	const rounds = r.followUps.length || r.pendingFollowUps.length || r.followUpsStopped;
	return [
		r.prUrls.length ? html`<p>Pull requests: ${prLinks(r.prUrls)}</p>` : null,
		r.parentRunId
			? html`<p id="round">Follow-up round ${r.round ? r.round.number : ""} of ${link(`/runs/${r.parentRunId}`, r.parentRunId)}</p>`
			: null,
		rounds ? html`<h3>Follow-up rounds</h3>` : null,
		r.followUps.length
			? html`<ol id="follow-ups">${r.followUps.map(
					(f) =>
						html`<li>${link(`/runs/${f.runId}`, f.runId)}${` · ${f.trigger.replace("_", " ")} · ${f.status || ""} · ${when(f.at)}`}</li>`,
				)}</ol>`
			: null,
		...r.pendingFollowUps.map(
			(p) =>
				html`<p>${`A ${p.trigger.replace("_", " ")} round starts ${when(p.dueAt)} on `}${link(p.prUrl, p.prUrl)}</p>`,
		),
		r.followUpsStopped
			? html`<p class="error">CI rounds stopped: ${r.followUpsStopped.reason}</p>`
			: null,
		r.plan ? html`<h3>Plan</h3>` : null,
		r.plan
			? html`<ol>${r.plan.steps.map((p) => html`<li>${`order ${p.order} · ${p.repo} — ${p.scope}`}</li>`)}</ol>`
			: null,
	];
}
