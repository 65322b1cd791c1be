// @ts-check
/** @import { StatsAnswer } from "../api/answers" */
/** @import UPlot from "uplot" */
import { duration } from "./format.js";
import { wall } from "./wall.js";

// The charts of the stats' 30 days (docs/dashboard.md › Dashboard): runs per day by outcome, success
// rate, time to PR and spend per day, from /api/stats' byDay. uPlot draws them: the page loads it
// from /assets as a script of its own (src/api/assets.ts), and works without it.

/**
 * The window's days, each with its numbers (a day without runs has none): the x axis of every
 * chart, in Unix seconds of its UTC midnight.
 * @param {StatsAnswer} s
 */
function days(s) {
	const out = [];
	const last = Date.parse(`${s.window.until.slice(0, 10)}T00:00:00.000Z`);
	for (let t = Date.parse(`${s.window.since.slice(0, 10)}T00:00:00.000Z`); t <= last; t += 864e5)
		out.push({ x: t / 1000, day: s.byDay[new Date(t).toISOString().slice(0, 10)] });
	return out;
}

/** uPlot, when its script loaded. */
const uplot = () =>
	/** @type {typeof UPlot | undefined} */ (/** @type {{ uPlot?: unknown }} */ (window).uPlot);

/** The data last drawn: the same stats are not drawn again. */
let drawnKey = "";
/** The charts drawn, resized with the window (each keeps its data). @type {UPlot[]} */
let plots = [];

// Side by side (4 on a wall, else 2): each card adds its padding and border (18 px) to the plot.
const chartSize = (/** @type {Element} */ box) => {
	const across = wall ? 4 : 2;
	return {
		width: Math.max(260, Math.floor((box.clientWidth - (across - 1) * 14) / across) - 18),
		height: wall ? 220 : 170,
	};
};

let resizing = false;
window.addEventListener("resize", () => {
	if (resizing || !plots.length) return;
	resizing = true;
	requestAnimationFrame(() => {
		resizing = false;
		const box = document.getElementById("charts");
		if (box) for (const p of plots) p.setSize(chartSize(box));
	});
});

/**
 * An element with its class or id and its text: the charts' cards are uPlot's to fill, so they are
 * built here rather than drawn by preact.
 * @param {keyof HTMLElementTagNameMap} tag @param {Record<string, string>} attrs @param {string} [text]
 */
function element(tag, attrs, text) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
	if (text) e.textContent = text;
	return e;
}

/**
 * One series of a chart: its values over the days. A stacked bar's values are sums (the tallest
 * drawn first); `shown` is what its legend says of a day.
 * @typedef {{ label: string, color: string, values: (number | null)[], bar?: boolean, shown?: (number | null)[] }} Series
 */

/**
 * Draws the charts of `s` under the stats header, once per change of its days.
 * @param {StatsAnswer} s
 */
export function charts(s) {
	const stats = /** @type {HTMLElement} */ (document.getElementById("stats"));
	const box =
		document.getElementById("charts") ||
		/** @type {HTMLElement} */ (
			stats.insertAdjacentElement("afterend", element("section", { id: "charts" }))
		);
	const key = JSON.stringify([s.window.since.slice(0, 10), s.byDay, wall]);
	if (key === drawnKey) return;
	drawnKey = key;
	const Plot = uplot();
	if (!Plot) {
		box.replaceChildren(
			element("p", { class: "muted" }, "Charts unavailable: their script did not load."),
		);
		return;
	}
	const ds = days(s);
	const x = ds.map((d) => d.x);
	const n = (/** @type {(d: NonNullable<typeof ds[number]["day"]>) => number | null} */ f) =>
		ds.map((d) => (d.day ? f(d.day) : null));
	const zero = (/** @type {(number | null)[]} */ v) => v.map((y) => y ?? 0);
	const succeeded = zero(n((d) => d.succeeded));
	const failed = zero(n((d) => d.failed));
	const cancelled = zero(n((d) => d.cancelled));
	const other = zero(n((d) => d.runs - d.succeeded - d.failed - d.cancelled));
	const bars = Plot.paths.bars ? Plot.paths.bars({ size: [0.7, 40] }) : undefined;
	const size = chartSize(box);
	for (const p of plots) p.destroy();
	plots = [];
	/**
	 * One chart: its title, and its series over the days; the legend says each series' own number.
	 * @param {string} id @param {string} title @param {Series[]} series
	 * @param {(v: number) => string} fmt
	 * @param {number} top The y axis reaches at least this (whole ticks on an empty chart).
	 */
	const chart = (id, title, series, fmt, top) => {
		const card = element("div", { class: "chart", id });
		card.append(element("h4", {}, title));
		const raw = series.map((se) => se.shown || se.values);
		const plot = new Plot(
			{
				...size,
				legend: { show: true },
				cursor: { drag: { x: false, y: false } },
				// Half a day either side, so the first and last days' bars show whole.
				scales: {
					x: { time: true, range: (_u, lo, hi) => [lo - 43200, hi + 43200] },
					y: { range: (_u, _lo, hi) => [0, Math.max(hi || 0, top)] },
				},
				axes: [{}, { values: (_u, vals) => vals.map((v) => fmt(v)), size: 60 }],
				series: [
					{},
					...series.map((se, i) => ({
						label: se.label,
						stroke: se.color,
						fill: se.bar ? se.color : undefined,
						width: se.bar ? 0 : 2,
						spanGaps: true,
						// A day's point is drawn as a dot too: a lone day (a new install) has no line.
						points: se.bar ? { show: false } : { show: true, size: 9, fill: se.color },
						...(se.bar && bars ? { paths: bars } : {}),
						value: (
							/** @type {unknown} */ _u,
							/** @type {number | null} */ _v,
							/** @type {number} */ _s,
							/** @type {number | null} */ at,
						) => {
							const v = at == null ? null : (raw[i]?.[at] ?? null);
							return v == null ? "–" : fmt(v);
						},
					})),
				],
			},
			[x, ...series.map((se) => se.values)],
			card,
		);
		plots.push(plot);
		return card;
	};
	const sum = (/** @type {number[][]} */ ...lists) =>
		x.map((_, i) => lists.reduce((t, l) => t + (l[i] ?? 0), 0));
	const count = (/** @type {number} */ v) => String(Math.round(v));
	box.replaceChildren(
		chart(
			"chart-runs",
			"Runs per day, by outcome",
			[
				{
					label: "other",
					color: "#c9ced6",
					values: sum(succeeded, failed, cancelled, other),
					shown: other,
					bar: true,
				},
				{
					label: "cancelled",
					color: "#9aa1ad",
					values: sum(succeeded, failed, cancelled),
					shown: cancelled,
					bar: true,
				},
				{
					label: "failed",
					color: "#d9534f",
					values: sum(succeeded, failed),
					shown: failed,
					bar: true,
				},
				{ label: "succeeded", color: "#2e9d57", values: succeeded, bar: true },
			],
			count,
			4,
		),
		chart(
			"chart-success",
			"Success rate",
			[
				{
					label: "success rate",
					color: "#2e9d57",
					values: n((d) => (d.successRate == null ? null : d.successRate * 100)),
				},
			],
			(v) => `${Math.round(v)}%`,
			100,
		),
		chart(
			"chart-pr",
			"Time to PR, median",
			[{ label: "median", color: "#3565c9", values: n((d) => d.timeToPr.medianSeconds) }],
			(v) => duration(v),
			600,
		),
		chart(
			"chart-spend",
			"Spend per day",
			// What is known of it: a day with an unpriced model is a floor
			// (docs/cost.md › Cost and budgets).
			[{ label: "spend", color: "#8a5a00", values: zero(n((d) => d.cost.knownUsd)), bar: true }],
			// Whole dollars on the axis past $10, cents below.
			(v) => `$${v.toFixed(v >= 10 ? 0 : 2)}`,
			1,
		),
	);
}
