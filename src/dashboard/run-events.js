// @ts-check
/** @import { EventAnswer, RunAnswer } from "../api/answers" */
import { stepNumber } from "../domain/step-label.js";
import { when } from "./format.js";
import { html } from "./html.js";

// What a run reported, on its page: the agent's output in its own pane, a tail that follows the
// newest line unless the reader scrolled up to read, and every other event as a row of the timeline,
// its step numbered by src/domain/step-label.js.

/** The pane keeps the newest lines: it is a tail, not the whole log. */
const TAIL = 2000;

/**
 * The output pane's lines; with none, whether some may still come.
 * @param {EventAnswer[]} events @param {boolean} active
 */
export function output(events, active) {
	const lines = events.filter((e) => e.type === "agent.output").slice(-TAIL);
	if (!lines.length)
		return html`<span id="output-empty" class="muted">${active ? "(no output yet)" : "(no output)"}</span>`;
	return lines.map((e) => html`<span key=${e.id}>${`${e.message.replace(/\n$/, "")}\n`}</span>`);
}

/** Whether the pane shows its last line (within a line): new lines keep it so. */
export function atEnd() {
	const pane = document.getElementById("output");
	return !pane || pane.scrollHeight - pane.scrollTop - pane.clientHeight < 24;
}

/** Shows the pane's last line. */
export function toEnd() {
	const pane = document.getElementById("output");
	if (pane) pane.scrollTop = pane.scrollHeight;
}

/**
 * The timeline's rows, its head first: every event but the agent's output (the pane's).
 * @param {EventAnswer[]} events @param {RunAnswer["steps"]} steps
 */
export const timeline = (events, steps) => [
	html`<tr>${["time", "event", "step", "message"].map((h) => html`<th>${h}</th>`)}</tr>`,
	...events
		.filter((e) => e.type !== "agent.output")
		.map(
			(e) =>
				html`<tr key=${e.id}>
					<td class="muted" title=${when(e.at)}>${new Date(e.at).toLocaleTimeString()}</td>
					<td>${e.type}</td>
					<td>${e.step == null ? "" : stepNumber(steps, e.step)}</td>
					<td>${e.message}</td>
				</tr>`,
		),
];
