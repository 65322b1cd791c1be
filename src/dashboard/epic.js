// @ts-check
/** @import { RunAnswer } from "../api/answers" */
import { html } from "./html.js";
import { badge, link, prLinks } from "./parts.js";

// An epic on its run's page (docs/epics.md › Epics): its phase, the research's questions, the table
// of its tasks; a task's run links back to its epic. Titles, reasons and questions are others' text:
// shown as text like everything else.

const COLUMNS = ["task", "title", "repo", "depends on", "status", "sub-issue", "run", "PRs"];

/** @param {NonNullable<RunAnswer["epic"]>["tasks"][number]} t */
const task = (t) =>
	html`<tr key=${t.id} data-task=${t.id}>
		<td>${t.id}</td>
		<td class="title">${t.title}</td>
		<td>${t.repo}</td>
		<td>${t.dependsOn.join(", ") || "–"}</td>
		<td class="status">${badge(t.status)}${t.reason ? html`<div class="muted reason">${t.reason}</div>` : null}</td>
		<td class="issue">${t.issue ? link(t.issue.url, t.issue.key || t.issue.url || "") : "–"}</td>
		<td class="run">${t.runId ? link(`/runs/${t.runId}`, t.runId) : "–"}</td>
		<td>${prLinks(t.prUrls || [])}</td>
	</tr>`;

/** An epic run's phase, questions and tasks; a task's run, the link to its epic. @param {RunAnswer} r */
export function epicParts(r) {
	if (r.epicTask)
		return html`<p id="epic-parent">Task ${r.epicTask.taskId} of epic ${link(`/runs/${r.epicTask.runId}`, r.epicTask.runId)}</p>`;
	const e = r.epic;
	if (!e) return null;
	return [
		html`<h3>Epic</h3>`,
		html`<p id="epic-phase">Phase <b>${e.phase.replace("_", " ")}</b>${` · ${e.done} of ${e.total} tasks done`}${e.continues ? " · continues " : ""}${e.continues ? link(`/runs/${e.continues}`, e.continues) : ""}</p>`,
		e.questions
			? html`<div id="epic-questions">
					<p>The research needs answers before the epic can be planned:</p>
					<ul>${e.questions.map((q) => html`<li>${q}</li>`)}</ul>
				</div>`
			: null,
		e.tasks.length
			? html`<table id="epic-tasks">
					<tr>${COLUMNS.map((h) => html`<th>${h}</th>`)}</tr>
					${e.tasks.map(task)}
				</table>`
			: null,
	];
}
