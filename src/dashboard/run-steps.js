// @ts-check
/** @import { RunAnswer, StepAnswer } from "../api/answers" */
import { stepNumber } from "../domain/step-label.js";
import { agentOf } from "./doing.js";
import { errorClass, money } from "./format.js";
import { html } from "./html.js";
import { badge, cost, link, relative } from "./parts.js";

// A run's steps on its page: numbered by src/domain/step-label.js (the server's own module), each
// with its agent's state while it runs, its cost and each retried attempt's, its pull request by its
// title (or its branch) and what that changed, its heartbeat and its error.

const COLUMNS = [
	"#",
	"repo",
	"status",
	"attempt",
	"agent",
	"provider",
	"cost",
	"PR / branch",
	"heartbeat",
	"error",
];

/**
 * What a step's pull request changed: "3 files +120 −8", unfolding to the files (as
 * src/domain/changes.ts counts them; the most changed first, the rest counted). Unfolded by the
 * reader, it stays so when the table is drawn again.
 * @param {NonNullable<StepAnswer["changes"]>} c
 */
function changes(c) {
	const more = c.files - c.list.length;
	return html`<details class="files">
		<summary>${`${c.files} ${c.files === 1 ? "file" : "files"} +${c.additions} −${c.deletions}`}</summary>
		<ul>
			${c.list.map((f) => html`<li><code>${f.path}</code>${f.binary ? " binary" : ` +${f.additions} −${f.deletions}`}</li>`)}
			${more > 0 ? html`<li class="muted">and ${more} more</li>` : null}
		</ul>
	</details>`;
}

/** Each attempt's cost, once the step was tried again: "#1 $4.71 · #2 unknown". @param {StepAnswer} s */
function attempts(s) {
	const usage = s.usage || [];
	if (usage.length < 2) return null;
	return html`<div class="muted attempts">${usage.map((u, i) => [
		i ? " · " : "",
		`#${u.attempt} `,
		u.cost
			? u.cost.modelUsd === null
				? html`<span class="unknown" title=${(u.cost.unknown || []).join("; ")}>unknown</span>`
				: money(u.cost.modelUsd + u.cost.computeUsd)
			: html`<span class="unknown" title="recorded before costs were kept">unknown</span>`,
	])}</div>`;
}

/** @param {RunAnswer} r @param {StepAnswer} s */
const step = (r, s) =>
	html`<tr key=${s.index} data-step=${String(s.index)}>
		<td class="step">${stepNumber(r.steps, s.index)}</td>
		<td title=${s.scope || ""}>${s.kind ? "–" : s.repo}</td>
		<td>${badge(s.status)}</td>
		<td>${s.attempt}</td>
		<td class="agent">${agentOf(s) ? badge(agentOf(s)) : ""}</td>
		<td>${s.provider || ""}</td>
		<td class="cost">${cost(s.cost)}${attempts(s)}</td>
		<td class="change">${s.prUrl ? link(s.prUrl, s.prTitle || s.prUrl) : s.branch || ""}${s.changes ? changes(s.changes) : null}</td>
		<td class="muted">${s.heartbeatAt ? relative(s.heartbeatAt) : ""}</td>
		<td class=${errorClass(s.status)}>${s.error || ""}</td>
	</tr>`;

/** The steps table's rows, its head first. @param {RunAnswer} r */
export const steps = (r) => [
	html`<tr>${COLUMNS.map((h) => html`<th>${h}</th>`)}</tr>`,
	...r.steps.map((s) => step(r, s)),
];
