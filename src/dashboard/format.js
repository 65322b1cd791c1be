// @ts-check
/** @import { RunAnswer } from "../api/answers" */

// How the dashboard says numbers, times and money, as the CLI and the tracker's comments do. Pure:
// no DOM.

/** A run's statuses while it is under way. */
export const ACTIVE = ["queued", "planning", "running", "awaiting_approval"];

/** "50%", or "–" when there is nothing to count. @param {number | null} r */
export const pct = (r) => (r == null ? "–" : `${Math.round(r * 100)}%`);

/** The browser's own way of saying a time. @param {string | undefined} iso */
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");

/** "12 s ago", "3 min ago", "2 h ago", "4 days ago". @param {string} iso */
export function ago(iso) {
	const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
	if (s < 60) return `${s} s ago`;
	if (s < 3600) return `${Math.floor(s / 60)} min ago`;
	if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
	const d = Math.floor(s / 86400);
	return `${d} day${d > 1 ? "s" : ""} ago`;
}

/** "45s", "3m 5s", "2h 10m"; "–" when unknown. @param {number | null | undefined} seconds */
export function duration(seconds) {
	if (seconds == null) return "–";
	const s = Math.round(seconds);
	if (s < 60) return `${s}s`;
	const m = Math.floor(s / 60);
	return m < 60 ? `${m}m ${s % 60}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** A run's duration: an active run's grows between updates, so it is counted here. @param {RunAnswer} r */
export const runDuration = (r) =>
	ACTIVE.includes(r.status)
		? Math.max(0, (Date.now() - Date.parse(r.createdAt)) / 1000)
		: r.durationSeconds;

/** Money one way, in cents: "$1.84", "$0.76", "<$0.01" (src/domain/cost.ts `usd`). @param {number} v */
export const money = (v) => (v > 0 && v < 0.005 ? "<$0.01" : `$${v.toFixed(2)}`);

/** `money`, or "–" when unknown. @param {number | null} v */
export const dollars = (v) => (v == null ? "–" : money(v));

/** The tokens a cost counts, all kinds. @param {RunAnswer["cost"]} c */
export const tokensOf = (c) =>
	c.tokens.input + c.tokens.output + c.tokens.cacheRead + c.tokens.cacheWrite;

/**
 * How an error is shown: a cancellation is what a person asked for, said plainly, not in red.
 * @param {string} status
 */
export const errorClass = (status) => (status === "cancelled" ? "muted reason" : "error");
