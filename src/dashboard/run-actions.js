// @ts-check
/** @import { z } from "zod" */
/** @import { approvingAnswer, startedAnswer } from "../api/answers" */
/** @import { Kid } from "./html.js" */
/** @import { RunState } from "./run-page.js" */
import { api, role, Unauthorized } from "./api.js";
import { ACTIVE, money, when } from "./format.js";
import { html } from "./html.js";
import { link } from "./parts.js";

// What a token may do on a run's page, and only that (docs/dashboard.md › What the token decides):
// with the admin token, cancel an active run, retry a finished one (continue an epic) and approve one
// paused at its cost limit; what the API answered stays as a notice until it is dismissed.

/** @typedef {{ kind: "muted" | "error", text: Kid }} Notice */

/** Sets what the notice says: it stays until dismissed (or the next action's answer). @param {RunState} state @param {Notice["kind"]} kind @param {Kid} text */
function say(state, kind, text) {
	state.notice = { kind, text };
	state.draw();
}

/**
 * @param {RunState} state
 * @param {"cancel" | "retry" | "approve"} action
 * @param {{ limitUsd: number }} [body]
 */
async function act(state, action, body) {
	const id = state.run?.runId;
	try {
		/** @type {z.output<typeof startedAnswer> & Partial<z.output<typeof approvingAnswer>>} */
		const out = await api(`/api/runs/${id}/${action}`, {
			method: "POST",
			...(body ? { body: JSON.stringify(body) } : {}),
		});
		say(
			state,
			"muted",
			action === "retry"
				? html`<span>Retrying as ${link(`/runs/${out.id}`, out.id)}</span>`
				: action === "approve"
					? `Approved: the run goes on up to ${money(out.limitUsd ?? 0)}.`
					: "Cancelling…",
		);
	} catch (err) {
		if (err instanceof Unauthorized) return;
		say(state, "error", /** @type {Error} */ (err).message);
	}
}

/** The notice of the last action's answer; hidden until there is one, and once dismissed. @param {RunState} state */
export function notice(state) {
	const n = state.notice;
	const dismiss = () => {
		state.notice = null;
		state.draw();
	};
	return html`<p id="notice" class=${n ? `notice ${n.kind}` : undefined} hidden=${!n}>${
		n
			? html`<span class="text">${n.text}</span> <button class="dismiss" title="Dismiss" aria-label="Dismiss" onClick=${dismiss}>×</button>`
			: null
	}</p>`;
}

/** Cancel (an active run) or retry (a finished one), for the admin token only. @param {RunState} state */
export function actions(state) {
	const r = state.run;
	if (!r) return null;
	if (role() !== "admin")
		return html`<span class="muted" id="read-only">Watching with the read-only token: cancel, retry and approve need the admin token.</span>`;
	const active = ACTIVE.includes(r.status);
	const label = active
		? "Cancel run"
		: r.kind === "epic"
			? "Continue the epic"
			: "Retry as a new run";
	return html`<button id=${active ? "cancel" : "retry"} onClick=${() => act(state, active ? "cancel" : "retry")}>${label}</button>`;
}

/**
 * A run paused at its cost limit: what it spent and, for the admin token, an Approve button with
 * an optional new limit. One form per request (its key), so a limit being typed survives the
 * redraws.
 * @param {RunState} state
 */
export function approval(state) {
	const r = state.run;
	const request = r && r.status === "awaiting_approval" ? r.approval : undefined;
	if (!request) return null;
	/** @param {SubmitEvent} e */
	const submit = (e) => {
		e.preventDefault();
		const form = /** @type {HTMLFormElement} */ (e.currentTarget);
		const limit = /** @type {HTMLInputElement} */ (form.elements.namedItem("limit"));
		const raw = limit.value.trim().replace(/^\$/, "");
		const usd = Number(raw);
		if (raw && !(usd > 0)) {
			say(state, "error", "The new limit is an amount in USD, such as 20");
			return;
		}
		act(state, "approve", raw ? { limitUsd: usd } : undefined);
	};
	const asked = html`<b>Waiting for approval: spent ${money(request.spentUsd)} of ${money(request.limitUsd)}</b>${` since ${when(request.requestedAt)}. `}`;
	const then =
		role() === "admin"
			? html`Approve to go on up to <input id="approve-limit" name="limit" inputmode="decimal" size="8" placeholder=${String(request.proposedLimitUsd)} aria-label="new limit in USD" />${` USD (empty: ${money(request.proposedLimitUsd)}) `}<button id="approve">Approve</button><span class="muted"> — or reply /lisa continue on its pull request or in its Linear session.</span>`
			: html`<span class="muted">The admin token approves here; or reply /lisa continue on its pull request or in its Linear session.</span>`;
	return html`<form key=${`${request.requestedAt} ${role()}`} id="approval" class="approval" onSubmit=${submit}>${asked}${then}</form>`;
}
