// @ts-check
/** @import { RunAnswer } from "../api/answers" */
import { ago, money, tokensOf, when } from "./format.js";
import { html } from "./html.js";

// The small views every page uses: a badge, a link, a time ago, a cost, pull requests, a run's kind.

/**
 * Only web links and the dashboard's own run pages become anchors: a javascript: or data: URL
 * from the API stays plain text.
 * @param {string | undefined} href @param {string | undefined} text
 */
export const link = (href, text) =>
	/^(https?:\/\/|\/runs\/)/i.test(href || "")
		? html`<a href=${href} rel="noopener noreferrer">${text}</a>`
		: text || "";

/** A status as a coloured word (the page's stylesheet colours it by its class). @param {string} status */
export const badge = (status) => html`<span class=${`badge ${status}`}>${status}</span>`;

/** A time said relatively, the exact one as its tooltip; `tick` moves it on. @param {string} iso */
export const relative = (iso) =>
	html`<time datetime=${iso} title=${when(iso)} class="ago">${ago(iso)}</time>`;

/** Moves every relative time of the page on, between the page's updates. */
export function tick() {
	for (const t of document.querySelectorAll("time.ago"))
		t.textContent = ago(/** @type {string} */ (t.getAttribute("datetime")));
}

/**
 * A cost: "unknown" (never $0) when some agent run's cost is unknown, with what is known and why
 * as its tooltip; "–" when nothing ran yet.
 * @param {RunAnswer["cost"]} c
 */
export function cost(c) {
	if (c.totalUsd === null)
		return html`<span class="unknown" title=${`at least ${money(c.knownUsd)}; ${c.unknown.join("; ")}`}>unknown</span>`;
	const ran = c.agentSeconds > 0 || tokensOf(c) > 0;
	return html`<span>${ran || c.totalUsd > 0 ? money(c.totalUsd) : "–"}</span>`;
}

/** Pull requests, one a line, each named by its path ("acme/api/pull/7"). @param {string[]} urls */
export const prLinks = (urls) =>
	urls.flatMap((u) => [link(u, u.replace(/^https?:\/\/[^/]+\//, "")), html`<br />`]);

/**
 * "epic" (with how many of its tasks are done) or "task" before a run's title
 * (docs/epics.md › Epics).
 * @param {RunAnswer} r
 */
export function kindTag(r) {
	if (!r.kind) return "";
	const title = r.epic
		? `${r.epic.done} of ${r.epic.total} tasks done`
		: r.epicTask
			? `task ${r.epicTask.taskId} of epic ${r.epicTask.runId}`
			: "";
	return html`<span class=${`tag ${r.kind}`} title=${title}>${r.kind}</span>`;
}
