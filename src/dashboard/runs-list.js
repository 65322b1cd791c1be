// @ts-check
/** @import { RunAnswer, RunsAnswer } from "../api/answers" */
/** @import { Kid } from "./html.js" */
import { api } from "./api.js";
import { doing } from "./doing.js";
import { ACTIVE, duration, errorClass, runDuration } from "./format.js";
import { html } from "./html.js";
import { badge, cost, kindTag, link, prLinks, relative } from "./parts.js";
import { answered, fail, show } from "./view.js";
import { wall } from "./wall.js";

// The runs list (`/`): a status and repo filter kept in the URL (`/?status=failed`), a row per run
// with what an active one is doing now, and what an empty list means.

const STATUSES = ["", ...ACTIVE, "succeeded", "failed", "cancelled"];
const COLUMNS = [
	"issue",
	"status",
	"title",
	"now",
	"repos",
	"provider",
	"duration",
	"cost",
	"pull requests",
	"started",
	"error",
];

/** The filters as the reader set them (a repo being typed stays as typed across the redraws). */
const filter = { status: "", repo: "" };
/** The runs last answered; null before the first answer. @type {RunAnswer[] | null} */
let runs = null;
/** The query they answered. */
let query = new URLSearchParams();

/** The filters' new values into the URL, and the list asked for again. */
function apply() {
	const next = new URLSearchParams();
	if (filter.status) next.set("status", filter.status);
	if (filter.repo.trim()) next.set("repo", filter.repo.trim());
	if (wall) next.set("wall", "1");
	history.replaceState(null, "", `/${next.toString() ? `?${next}` : ""}`);
	list().catch(fail);
}

/** @param {Event} e */
const typed = (e) => /** @type {HTMLInputElement | HTMLSelectElement} */ (e.currentTarget).value;
/** A status chosen: the list at once. @param {Event} e */
const chosen = (e) => {
	filter.status = typed(e);
	apply();
};
/** A repo being typed: the list once it is changed (Enter, or leaving the field). @param {Event} e */
const typing = (e) => {
	filter.repo = typed(e);
};

const filters = () =>
	html`<div class="filters">
		<select id="status-filter" value=${filter.status} onChange=${chosen}>
			${STATUSES.map((s) => html`<option value=${s}>${s || "all statuses"}</option>`)}
		</select>
		<input id="repo-filter" placeholder="repo" size="14" value=${filter.repo} onInput=${typing} onChange=${apply} />
	</div>`;

/**
 * What an empty list says: that the filters match nothing, or how a first run starts.
 * @param {URLSearchParams} q The list's query
 * @returns {Kid[]}
 */
function emptyList(q) {
	if (q.get("status") || q.get("repo")) return ["No runs match these filters."];
	const hook = (/** @type {string} */ t) =>
		html`<code>${`${location.origin}/webhooks/${t}`}</code>`;
	return [
		"No runs yet. To start one, label an issue for Lisa in your tracker, whose webhook points at ",
		hook("linear"),
		", ",
		hook("trello"),
		" or ",
		hook("github"),
		"; without a public URL, ",
		html`<code>npx lisa run</code>`,
		" works through the labelled issues; ",
		html`<code>npx lisa plan</code>`,
		" starts an epic. ",
		html`<code>npm run demo</code>`,
		" shows three runs without any account (README › Quick start).",
	];
}

/** One run's row. @param {RunAnswer} r */
function row(r) {
	const active = ACTIVE.includes(r.status);
	// A run that plans learns its repos from the plan.
	const repos = r.repos.length
		? r.repos.join(", ")
		: html`<span class="muted">${active ? "(the plan decides)" : "–"}</span>`;
	return html`<tr key=${r.id} data-run=${r.id}>
		<td>${link(`/runs/${r.id}`, r.issueKey || r.issueId)}</td>
		<td class="status">${badge(r.status)}</td>
		<td class="title">${kindTag(r)}${r.url ? link(r.url, r.title || r.issueId) : r.title || ""}</td>
		<td class="now">${active ? doing(r) : ""}</td>
		<td class="repos">${repos}</td>
		<td>${r.provider || ""}</td>
		<td>${duration(runDuration(r))}</td>
		<td class="cost">${cost(r.cost)}</td>
		<td>${prLinks(r.prUrls)}</td>
		<td class="started">${relative(r.createdAt)}</td>
		<td class="why"><span class=${errorClass(r.status)}>${(r.error || "").slice(0, 160)}</span></td>
	</tr>`;
}

/** @param {RunAnswer[]} shown */
const table = (shown) =>
	html`<table id="runs">
		<tr>${COLUMNS.map((h) => html`<th>${h}</th>`)}</tr>
		${shown.map(row)}
		${shown.length ? null : html`<tr><td colspan="11" class="muted">${emptyList(query)}</td></tr>`}
	</table>`;

const page = () => [filters(), runs && table(runs)];

/** The list's page: the filters at once (as the URL sets them), the runs once asked for. */
export function runsList() {
	const q = new URLSearchParams(location.search);
	filter.status = q.get("status") || "";
	filter.repo = q.get("repo") || "";
	show(page);
}

/** Asks for the runs again and draws them. */
export async function list() {
	const q = new URLSearchParams(location.search);
	q.delete("wall");
	q.set("limit", "50");
	/** @type {RunsAnswer} */
	const { runs: listed } = await api(`/api/runs?${q}`);
	// A wall screen shows what is under way first.
	runs = wall
		? [
				...listed.filter((r) => ACTIVE.includes(r.status)),
				...listed.filter((r) => !ACTIVE.includes(r.status)),
			]
		: listed;
	query = q;
	answered();
	show(page);
}
