// @ts-check
/** @import { z } from "zod" */
/** @import { approvingAnswer, costAnswer, eventsAnswer, runAnswer, runsAnswer, startedAnswer, statsAnswer, whoamiAnswer } from "./schemas" */
/** @import UPlot from "uplot" */

// The dashboard's browser script, plain JavaScript checked by tsc against the DOM
// (tsconfig.dashboard.json). dashboard.ts serves this function's own source as /dashboard.js (no
// build step), so it must be self-contained: it references nothing outside its body but the
// browser's globals (the type imports are comments). Everything from the API is inserted as text,
// and only http(s) URLs and the dashboard's own /runs/ pages become links. The run page follows /api/runs/:id/stream with fetch
// (EventSource cannot send the Authorization header) and updates in place. The charts are uPlot's,
// loaded by the page from /assets (src/api/assets.ts). docs/dashboard.md › Dashboard.

/** @typedef {z.output<typeof runAnswer>} Run */
/** @typedef {z.output<typeof costAnswer>} Cost */
/** @typedef {z.output<typeof eventsAnswer>["events"][number]} TimelineEvent */
/** @typedef {Node | string | number | null | undefined} Kid */
/** @typedef {{ event: string, data: string, id?: string, retry?: number }} SseMessage */
/**
 * @typedef {object} RunState
 * @property {Run | null} run
 * @property {TimelineEvent[]} events
 * @property {string | null | undefined} lastId
 * @property {boolean} ended
 * @property {number} missing
 * @property {HTMLElement} notice What an action answered: kept until dismissed.
 * @property {{ key: string, box: HTMLElement } | null} approval The approval form of the request shown (kept across redraws, so a limit being typed survives them).
 * @property {number} shown How many of `events` the page shows (the output pane and the timeline only grow).
 */
/** @typedef {z.output<typeof statsAnswer>} Stats */
/** @typedef {Run["steps"][number]} Step */

/** @returns {void} */
export function dashboardMain() {
	// The page's own elements (dashboard.ts), and those the script may not have drawn yet.
	const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
	const found = (/** @type {string} */ id) => document.getElementById(id);
	const view = $("view");
	const login = /** @type {HTMLFormElement} */ ($("login"));
	const statsBar = $("stats");
	const ACTIVE = ["queued", "planning", "running", "awaiting_approval"];
	const STATUSES = ["", ...ACTIVE, "succeeded", "failed", "cancelled"];
	// The wall view: full width, large type, the active runs first (`?wall=1`, kept in the URL).
	const wall = new URLSearchParams(location.search).get("wall") === "1";
	document.body.classList.toggle("wall", wall);
	/** What the token may do (GET /api/whoami): actions are offered to "admin" only. */
	let role = "read";

	// dashboard.ts finds esbuild's keepNames helper by this function's name: keep it `el`.
	/**
	 * @template {keyof HTMLElementTagNameMap} K
	 * @param {K} tag
	 * @param {Record<string, string> | null} [attrs]
	 * @param {...Kid} kids
	 * @returns {HTMLElementTagNameMap[K]}
	 */
	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
		for (const k of kids)
			e.append(k instanceof Node ? k : document.createTextNode(k == null ? "" : String(k)));
		return e;
	}
	// Only web links become anchors: a javascript: or data: URL from the API stays plain text.
	/** @param {string | undefined} href @param {string | undefined} text */
	const link = (href, text) =>
		/^(https?:\/\/|\/runs\/)/i.test(href || "")
			? el("a", { href: /** @type {string} */ (href), rel: "noopener noreferrer" }, text)
			: document.createTextNode(text || "");
	const badge = (/** @type {string} */ status) => el("span", { class: `badge ${status}` }, status);
	const pct = (/** @type {number | null} */ r) => (r == null ? "–" : `${Math.round(r * 100)}%`);
	const when = (/** @type {string | undefined} */ iso) =>
		iso ? new Date(iso).toLocaleString() : "";
	/** "12 s ago", "3 min ago", "2 h ago", "4 days ago". @param {string} iso */
	function ago(iso) {
		const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
		if (s < 60) return `${s} s ago`;
		if (s < 3600) return `${Math.floor(s / 60)} min ago`;
		if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
		const d = Math.floor(s / 86400);
		return `${d} day${d > 1 ? "s" : ""} ago`;
	}
	/** A time said relatively, the exact one as its tooltip; `tick` refreshes it. @param {string} iso */
	const relative = (iso) => el("time", { datetime: iso, title: when(iso), class: "ago" }, ago(iso));
	const tick = () => {
		document.querySelectorAll("time.ago").forEach((t) => {
			t.textContent = ago(/** @type {string} */ (t.getAttribute("datetime")));
		});
	};

	// A step's number as every view says it: the mirror of src/domain/step-label.ts (the script
	// imports nothing; test/e2e/dashboard-served.test.ts and dashboard-live.test.ts hold them to the
	// same answers).
	/** @param {readonly Step[]} steps @param {number} index */
	function stepNumber(steps, index) {
		const kind = steps.find((s) => s.index === index)?.kind;
		if (kind) return kind === "research" ? "research" : "plan";
		const at = steps.filter((s) => !s.kind).findIndex((s) => s.index === index);
		return String(at < 0 ? index + 1 : at + 1);
	}
	/** @param {readonly Step[]} steps @param {number} index */
	function stepLabel(steps, index) {
		const number = stepNumber(steps, index);
		if (steps.find((s) => s.index === index)?.kind) return number;
		const repo = steps.find((s) => s.index === index)?.repo;
		return repo ? `step ${number} (${repo})` : `step ${number}`;
	}
	const ENDED_STEP = ["succeeded", "failed", "cancelled"];
	/**
	 * The agent's state while its step runs; once the step ended, a live state ("in_progress") is
	 * stale and not shown (the step's own badge says how it ended).
	 * @param {Step} s
	 */
	const agentOf = (s) =>
		!s.agentState ||
		(ENDED_STEP.includes(s.status) && !["stuck", "crashed", "completed"].includes(s.agentState))
			? ""
			: s.agentState;
	/**
	 * What an active run is doing: the step under way (or next), its agent's state, and how far the
	 * run is ("1 of 2 done"); a run before its first step says its status.
	 * @param {Run} r
	 * @returns {Node}
	 */
	function doing(r) {
		const live =
			r.steps.find((s) => s.status === "running" || s.status === "launching") ||
			r.steps.find((s) => s.status === "pending");
		// The steps that change a repository: not a plan's, not an epic's research or plan.
		const work = r.steps.filter((s) => !s.kind);
		const done = work.filter((s) => s.status === "succeeded").length;
		const agent = live ? agentOf(live) : "";
		return el(
			"span",
			{ class: "doing" },
			live ? `${stepLabel(r.steps, live.index)} · ${live.status}` : r.status,
			agent ? " · agent " : "",
			agent ? badge(agent) : "",
			work.length > 1 ? ` · ${done} of ${work.length} done` : "",
			` · ${duration(runDuration(r))}`,
		);
	}
	/** @param {number | null | undefined} seconds */
	function duration(seconds) {
		if (seconds == null) return "–";
		const s = Math.round(seconds);
		if (s < 60) return `${s}s`;
		const m = Math.floor(s / 60);
		return m < 60 ? `${m}m ${s % 60}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
	}
	// An active run's duration grows between updates: count it here.
	const runDuration = (/** @type {Run} */ r) =>
		ACTIVE.includes(r.status)
			? Math.max(0, (Date.now() - Date.parse(r.createdAt)) / 1000)
			: r.durationSeconds;
	/** Money one way, in cents: "$1.84", "$0.76", "<$0.01" (src/domain/cost.ts `usd`). */
	const money = (/** @type {number} */ v) => (v > 0 && v < 0.005 ? "<$0.01" : `$${v.toFixed(2)}`);
	/** The tokens a cost counts, all kinds. @param {Cost} c */
	const tokensOf = (c) =>
		c.tokens.input + c.tokens.output + c.tokens.cacheRead + c.tokens.cacheWrite;
	/**
	 * How an error is shown: a cancellation is what a person asked for, said plainly, not in red.
	 * @param {string} status
	 */
	const errorClass = (status) => (status === "cancelled" ? "muted reason" : "error");
	/**
	 * A cost as text: "unknown" (never $0) when some agent run's cost is unknown, with what is
	 * known and why as its tooltip; "–" when nothing ran yet.
	 * @param {Cost} c
	 */
	function costEl(c) {
		if (c.totalUsd === null)
			return el(
				"span",
				{ class: "unknown", title: `at least ${money(c.knownUsd)}; ${c.unknown.join("; ")}` },
				"unknown",
			);
		const ran = c.agentSeconds > 0 || tokensOf(c) > 0;
		return el("span", null, ran || c.totalUsd > 0 ? money(c.totalUsd) : "–");
	}
	const prLinks = (/** @type {string[]} */ urls) =>
		urls.flatMap((u) => [link(u, u.replace(/^https?:\/\/[^/]+\//, "")), el("br")]);
	/**
	 * "epic" (with how many of its tasks are done) or "task" before a run's title
	 * (docs/epics.md › Epics).
	 * @param {Run} r
	 */
	const kindTag = (r) =>
		r.kind
			? el(
					"span",
					{
						class: `tag ${r.kind}`,
						title: r.epic
							? `${r.epic.done} of ${r.epic.total} tasks done`
							: r.epicTask
								? `task ${r.epicTask.taskId} of epic ${r.epicTask.runId}`
								: "",
					},
					r.kind,
				)
			: "";
	const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

	const token = () => localStorage.getItem("lisaToken");
	const auth = () => ({ authorization: `Bearer ${token()}` });
	class Unauthorized extends Error {}
	// A refused token signs the page out: what it still had under way (the run's stream, a list or
	// stats request) stops, and nothing is drawn again under the login form.
	const signedOut = new AbortController();
	const out = () => signedOut.signal.aborted;
	function unauthorized() {
		signedOut.abort();
		localStorage.removeItem("lisaToken");
		login.hidden = false;
		$("refused").hidden = false;
		view.replaceChildren();
		statsBar.replaceChildren();
		return new Unauthorized("unauthorized");
	}
	/**
	 * @template T
	 * @param {string} path
	 * @param {RequestInit} [init]
	 * @returns {Promise<T>}
	 */
	async function api(path, init) {
		const res = await fetch(
			path,
			Object.assign({}, init, { headers: auth(), signal: signedOut.signal }),
		);
		if (res.status === 401) throw unauthorized();
		const body = await res.json().catch(() => ({}));
		// A refusal says what was wrong, the API's `issues` too (as src/cli/client.ts says it).
		if (!res.ok)
			throw new Error(
				[body.error, ...(body.issues || [])].filter(Boolean).join("; ") || res.statusText,
			);
		return body;
	}

	// A printed link carries a one-time sign-in code (`/#code=…`, as `npm start` and `npm run demo`
	// print it), never the token: the browser's history keeps every address it opened. The page
	// trades the code for the read-only token (POST /dashboard/sign-in), after which the code is spent.
	const code = new URLSearchParams(location.hash.slice(1)).get("code");
	if (code) history.replaceState(null, "", `${location.pathname}${location.search}`);
	/** @param {string} given */
	async function redeem(given) {
		const res = await fetch("/dashboard/sign-in", {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ code: given }),
		});
		if (res.ok) {
			/** @type {{ token: string }} */
			const body = await res.json();
			localStorage.setItem("lisaToken", body.token);
		} else $("spent").hidden = false;
	}

	login.addEventListener("submit", (e) => {
		e.preventDefault();
		localStorage.setItem("lisaToken", /** @type {HTMLInputElement} */ ($("token")).value.trim());
		login.hidden = true;
		$("refused").hidden = true;
		$("spent").hidden = true;
		start();
	});

	// ── stats header ────────────────────────────────────────────────────────────────────────
	/** @param {string} label @param {Kid} value */
	const stat = (label, value) =>
		el("div", { class: "stat" }, el("b", null, value), el("span", null, label));
	/** `money`, or "–" when unknown. @param {number | null} v */
	const dollars = (v) => (v == null ? "–" : money(v));
	async function stats() {
		/** @type {Stats} */
		const s = await api("/api/stats");
		if (!location.pathname.startsWith("/runs/")) charts(s);
		const c = s.counts;
		// An unknown part (a model without a price) leaves the known part as a floor.
		const spent =
			s.cost.totalUsd == null ? `≥ ${dollars(s.cost.knownUsd)}` : dollars(s.cost.totalUsd);
		statsBar.replaceChildren(
			stat("runs, 30 days", s.total),
			stat("active", c.queued + c.planning + c.running + c.awaiting_approval),
			stat("succeeded", c.succeeded),
			stat("failed", c.failed),
			stat("success rate", pct(s.successRate)),
			stat("time to PR, median", duration(s.timeToPr.medianSeconds)),
			stat("time to PR, p90", duration(s.timeToPr.p90Seconds)),
			stat("agent time", duration(s.agentSeconds)),
			stat("cost, 30 days", spent),
			stat("per successful run", dollars(s.costPerSucceededRun)),
			stat("per merged PR", dollars(s.costPerMergedPr)),
		);
	}

	// ── charts ──────────────────────────────────────────────────────────────────────────────
	/**
	 * The window's days, each with its numbers (a day without runs has none): the x axis of every
	 * chart, in Unix seconds of its UTC midnight.
	 * @param {Stats} s
	 */
	function days(s) {
		const out = [];
		const last = Date.parse(`${s.window.until.slice(0, 10)}T00:00:00.000Z`);
		for (let t = Date.parse(`${s.window.since.slice(0, 10)}T00:00:00.000Z`); t <= last; t += 864e5)
			out.push({ x: t / 1000, day: s.byDay[new Date(t).toISOString().slice(0, 10)] });
		return out;
	}
	/** uPlot, when its script loaded (the page works without it). */
	const uplot = () =>
		/** @type {typeof UPlot | undefined} */ (/** @type {{ uPlot?: unknown }} */ (window).uPlot);
	let chartsKey = "";
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
			const box = found("charts");
			if (box) for (const p of plots) p.setSize(chartSize(box));
		});
	});
	/**
	 * Runs per day by outcome, success rate, time to PR and spend per day
	 * (docs/dashboard.md › Dashboard).
	 * @param {Stats} s
	 */
	function charts(s) {
		const box =
			found("charts") ||
			statsBar.insertAdjacentElement("afterend", el("section", { id: "charts" }));
		if (!box) return;
		const key = JSON.stringify([s.window.since.slice(0, 10), s.byDay, wall]);
		if (key === chartsKey) return;
		chartsKey = key;
		const Plot = uplot();
		if (!Plot) {
			box.replaceChildren(
				el("p", { class: "muted" }, "Charts unavailable: their script did not load."),
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
		 * One chart: its title, and its series over the days. Stacked bars are drawn as sums, the
		 * tallest first; the legend says each series' own number.
		 * @param {string} id @param {string} title
		 * @param {{ label: string, color: string, values: (number | null)[], bar?: boolean, shown?: (number | null)[] }[]} series
		 * @param {(v: number) => string} fmt
		 * @param {number} top The y axis reaches at least this (whole ticks on an empty chart).
		 */
		const chart = (id, title, series, fmt, top) => {
			const div = el("div", { class: "chart", id }, el("h4", null, title));
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
				div,
			);
			plots.push(plot);
			return div;
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

	// ── runs list ───────────────────────────────────────────────────────────────────────────
	function filters() {
		const q = new URLSearchParams(location.search);
		const status = el(
			"select",
			{ id: "status-filter" },
			...STATUSES.map((s) => el("option", { value: s }, s || "all statuses")),
		);
		status.value = q.get("status") || "";
		const repo = el("input", { id: "repo-filter", placeholder: "repo", size: "14" });
		repo.value = q.get("repo") || "";
		const apply = () => {
			const next = new URLSearchParams();
			if (status.value) next.set("status", status.value);
			if (repo.value.trim()) next.set("repo", repo.value.trim());
			if (wall) next.set("wall", "1");
			history.replaceState(null, "", `/${next.toString() ? `?${next}` : ""}`);
			list().catch(shown);
		};
		status.addEventListener("change", apply);
		repo.addEventListener("change", apply);
		return el("div", { class: "filters" }, status, repo);
	}
	/**
	 * What an empty list says: that the filters match nothing, or how a first run starts.
	 * @param {URLSearchParams} q The list's query
	 * @returns {Kid[]}
	 */
	function emptyList(q) {
		if (q.get("status") || q.get("repo")) return ["No runs match these filters."];
		const hook = (/** @type {string} */ t) => el("code", null, `${location.origin}/webhooks/${t}`);
		return [
			"No runs yet. To start one, label an issue for Lisa in your tracker, whose webhook points at ",
			hook("linear"),
			", ",
			hook("trello"),
			" or ",
			hook("github"),
			"; without a public URL, ",
			el("code", null, "npx lisa run"),
			" works through the labelled issues; ",
			el("code", null, "npx lisa plan"),
			" starts an epic. ",
			el("code", null, "npm run demo"),
			" shows three runs without any account (README › Quick start).",
		];
	}
	async function list() {
		const q = new URLSearchParams(location.search);
		q.delete("wall");
		q.set("limit", "50");
		/** @type {z.output<typeof runsAnswer>} */
		const { runs: listed } = await api(`/api/runs?${q}`);
		// A wall screen shows what is under way first.
		const runs = wall
			? [
					...listed.filter((r) => ACTIVE.includes(r.status)),
					...listed.filter((r) => !ACTIVE.includes(r.status)),
				]
			: listed;
		const rows = runs.map((r) =>
			el(
				"tr",
				{ "data-run": r.id },
				el("td", null, link(`/runs/${r.id}`, r.issueKey || r.issueId)),
				el("td", { class: "status" }, badge(r.status)),
				el(
					"td",
					{ class: "title" },
					kindTag(r),
					r.url ? link(r.url, r.title || r.issueId) : r.title || "",
				),
				el("td", { class: "now" }, ACTIVE.includes(r.status) ? doing(r) : ""),
				// A run that plans learns its repos from the plan.
				el(
					"td",
					{ class: "repos" },
					r.repos.length
						? r.repos.join(", ")
						: el(
								"span",
								{ class: "muted" },
								ACTIVE.includes(r.status) ? "(the plan decides)" : "–",
							),
				),
				el("td", null, r.provider || ""),
				el("td", null, duration(runDuration(r))),
				el("td", { class: "cost" }, costEl(r.cost)),
				el("td", null, ...prLinks(r.prUrls)),
				el("td", { class: "started" }, relative(r.createdAt)),
				el(
					"td",
					{ class: "why" },
					el("span", { class: errorClass(r.status) }, (r.error || "").slice(0, 160)),
				),
			),
		);
		const table = el(
			"table",
			{ id: "runs" },
			el(
				"tr",
				null,
				...[
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
				].map((h) => el("th", null, h)),
			),
			...rows,
		);
		if (!runs.length)
			table.append(el("tr", null, el("td", { colspan: "11", class: "muted" }, ...emptyList(q))));
		// An answer again: a failure shown before is over.
		found("failure")?.remove();
		const shownTable = found("runs");
		if (shownTable) shownTable.replaceWith(table);
		else view.append(table);
	}

	// ── one run, live ───────────────────────────────────────────────────────────────────────
	/**
	 * @param {ReadableStream<Uint8Array>} body
	 * @returns {AsyncGenerator<SseMessage>}
	 */
	async function* sse(body) {
		const reader = body.getReader();
		const decoder = new TextDecoder();
		let buffer = "";
		for (;;) {
			const { value, done } = await reader.read();
			if (done) return;
			buffer += decoder.decode(value, { stream: true });
			for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
				const block = buffer.slice(0, end);
				buffer = buffer.slice(end + 2);
				/** @type {SseMessage} */
				const m = { event: "message", data: "" };
				/** @type {string[]} */
				const data = [];
				for (const line of block.split("\n")) {
					if (!line || line[0] === ":") continue;
					const colon = line.indexOf(":");
					const field = colon < 0 ? line : line.slice(0, colon);
					const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
					if (field === "data") data.push(value);
					else if (field === "event") m.event = value;
					else if (field === "id") m.id = value;
					else if (field === "retry") m.retry = Number(value);
				}
				if (data.length) {
					m.data = data.join("\n");
					yield m;
				}
			}
		}
	}

	/** @param {string} id @param {RunState} state @param {() => void} draw */
	async function follow(id, state, draw) {
		let retry = 2000;
		while (!out()) {
			/** @type {Record<string, string>} */
			const headers = auth();
			if (state.lastId) headers["last-event-id"] = state.lastId;
			/** @type {Response} */
			let res;
			try {
				res = await fetch(`/api/runs/${id}/stream`, { headers, signal: signedOut.signal });
			} catch {
				await sleep(retry);
				continue;
			}
			if (res.status === 401) throw unauthorized();
			// A run just requested exists once intake took it: wait a little before saying it does not.
			if (res.status === 404 && ++state.missing < 15) {
				view.replaceChildren(el("p", { class: "muted" }, "Waiting for the run to start…"));
				await sleep(2000);
				continue;
			}
			if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || res.statusText);
			$("live").textContent = "· live";
			try {
				for await (const m of sse(/** @type {ReadableStream<Uint8Array>} */ (res.body))) {
					if (m.retry) retry = m.retry;
					if (m.event === "run") state.run = JSON.parse(m.data);
					if (m.event === "timeline") {
						state.events.push(JSON.parse(m.data));
						state.lastId = m.id;
					}
					if (m.event === "end") state.ended = true;
					draw();
				}
			} catch {
				// The stream broke off: ask again below.
			}
			$("live").textContent = "";
			if (state.ended) return;
			// A buffering gateway ends each answer; ask again after what the server said.
			await sleep(retry);
		}
	}

	/** Sets what the notice says; it stays until dismissed (or the next action's answer). */
	/** @param {HTMLElement} notice @param {"muted" | "error"} kind @param {...Kid} kids */
	function say(notice, kind, ...kids) {
		const dismiss = el(
			"button",
			{ class: "dismiss", title: "Dismiss", "aria-label": "Dismiss" },
			"×",
		);
		dismiss.addEventListener("click", () => {
			notice.hidden = true;
			notice.replaceChildren();
		});
		notice.className = `notice ${kind}`;
		notice.hidden = false;
		notice.replaceChildren(el("span", { class: "text" }, ...kids), " ", dismiss);
	}

	/**
	 * @param {string} id
	 * @param {"cancel" | "retry" | "approve"} action
	 * @param {HTMLElement} notice
	 * @param {{ limitUsd: number }} [body]
	 */
	async function act(id, action, notice, body) {
		try {
			/** @type {z.output<typeof startedAnswer> & Partial<z.output<typeof approvingAnswer>>} */
			const out = await api(`/api/runs/${id}/${action}`, {
				method: "POST",
				...(body ? { body: JSON.stringify(body) } : {}),
			});
			say(
				notice,
				"muted",
				action === "retry"
					? el("span", null, "Retrying as ", link(`/runs/${out.id}`, out.id))
					: action === "approve"
						? `Approved: the run goes on up to ${money(out.limitUsd ?? 0)}.`
						: "Cancelling…",
			);
		} catch (err) {
			if (err instanceof Unauthorized) return;
			say(notice, "error", /** @type {Error} */ (err).message);
		}
	}

	/**
	 * Draws `build()` into the page's element `id` when `key` changed since it was drawn: the rest of
	 * the page (a scrolled pane, a selection, a field being typed in) stays as it is.
	 * @param {string} id @param {unknown} key @param {() => Kid[]} build
	 */
	function fill(id, key, build) {
		const box = $(id);
		const k = JSON.stringify(key);
		if (box.dataset.key === k) return;
		box.dataset.key = k;
		box.replaceChildren(...build().map((kid) => (kid instanceof Node ? kid : String(kid ?? ""))));
	}

	/** The run page's parts, drawn once; drawRun fills them. @param {RunState} state */
	function runSkeleton(state) {
		const part = (/** @type {keyof HTMLElementTagNameMap} */ tag, /** @type {string} */ id) =>
			el(tag, { id });
		view.replaceChildren(
			part("h2", "heading"),
			part("p", "summary"),
			part("div", "why"),
			part("p", "cost"),
			part("div", "approvals"),
			part("div", "approval-slot"),
			part("p", "actions"),
			state.notice,
			part("div", "links"),
			part("div", "epic"),
			el("h3", null, "Steps"),
			el("table", { id: "steps" }),
			el("h3", null, "Agent output"),
			el("pre", { class: "tail", id: "output" }),
			el("h3", null, "Timeline"),
			el(
				"table",
				{ id: "timeline" },
				el("tr", null, ...["time", "event", "step", "message"].map((h) => el("th", null, h))),
			),
		);
	}

	/** The steps table's rows. @param {Run} r @param {Set<string | undefined>} unfolded */
	function stepRows(r, unfolded) {
		return r.steps.map((s) =>
			el(
				"tr",
				{ "data-step": String(s.index) },
				el("td", { class: "step" }, stepNumber(r.steps, s.index)),
				el("td", { title: s.scope || "" }, s.kind ? "–" : s.repo),
				el("td", null, badge(s.status)),
				el("td", null, s.attempt),
				el("td", { class: "agent" }, agentOf(s) ? badge(agentOf(s)) : ""),
				el("td", null, s.provider || ""),
				el(
					"td",
					{ class: "cost" },
					costEl(s.cost),
					// Each attempt's cost, once the step was tried again.
					(s.usage || []).length > 1
						? el(
								"div",
								{ class: "muted attempts" },
								...(s.usage || []).flatMap((u, i) => [
									i ? " · " : "",
									`#${u.attempt} `,
									u.cost
										? u.cost.modelUsd === null
											? el(
													"span",
													{ class: "unknown", title: (u.cost.unknown || []).join("; ") },
													"unknown",
												)
											: money(u.cost.modelUsd + u.cost.computeUsd)
										: el(
												"span",
												{ class: "unknown", title: "recorded before costs were kept" },
												"unknown",
											),
								]),
							)
						: "",
				),
				el(
					"td",
					{ class: "change" },
					s.prUrl ? link(s.prUrl, s.prTitle || s.prUrl) : s.branch || "",
					s.changes ? changesEl(s.changes, unfolded.has(String(s.index))) : "",
				),
				el("td", { class: "muted" }, s.heartbeatAt ? relative(s.heartbeatAt) : ""),
				el("td", { class: errorClass(s.status) }, s.error || ""),
			),
		);
	}

	/**
	 * What a step's pull request changed: "3 files +120 −8", unfolding to the files (as
	 * src/domain/changes.ts counts them; the most changed first, the rest counted).
	 * @param {NonNullable<Step["changes"]>} c @param {boolean} open
	 */
	function changesEl(c, open) {
		const more = c.files - c.list.length;
		return el(
			"details",
			open ? { class: "files", open: "" } : { class: "files" },
			el(
				"summary",
				null,
				`${c.files} ${c.files === 1 ? "file" : "files"} +${c.additions} −${c.deletions}`,
			),
			el(
				"ul",
				null,
				...c.list.map((f) =>
					el(
						"li",
						null,
						el("code", null, f.path),
						f.binary ? " binary" : ` +${f.additions} −${f.deletions}`,
					),
				),
				more > 0 ? el("li", { class: "muted" }, `and ${more} more`) : "",
			),
		);
	}

	/**
	 * What came since the last draw: agent output is appended to the pane, which follows the newest
	 * line unless the reader scrolled up; every other event is a row of the timeline.
	 * @param {RunState} state
	 */
	function drawEvents(state) {
		const pane = $("output");
		const fresh = state.events.slice(state.shown);
		state.shown = state.events.length;
		const output = fresh.filter((e) => e.type === "agent.output");
		if (output.length) {
			// At the bottom (within a line) before the new lines: the pane follows them.
			const following = pane.scrollHeight - pane.scrollTop - pane.clientHeight < 24;
			found("output-empty")?.remove();
			pane.append(...output.map((e) => `${e.message.replace(/\n$/, "")}\n`));
			// The pane keeps the newest lines (it is a tail, not the whole log).
			while (pane.childNodes.length > 2000) pane.firstChild?.remove();
			if (following) pane.scrollTop = pane.scrollHeight;
		}
		const steps = state.run ? state.run.steps : [];
		$("timeline").append(
			...fresh
				.filter((e) => e.type !== "agent.output")
				.map((e) =>
					el(
						"tr",
						null,
						el("td", { class: "muted", title: when(e.at) }, new Date(e.at).toLocaleTimeString()),
						el("td", null, e.type),
						el("td", null, e.step == null ? "" : stepNumber(steps, e.step)),
						el("td", null, e.message),
					),
				),
		);
	}

	/**
	 * An epic run's phase, questions and task table; a task's run, the link to its epic
	 * (docs/epics.md › Epics). Titles, reasons and questions are others' text: inserted as text like
	 * everything else.
	 * @param {Run} r
	 * @returns {Kid[]}
	 */
	function epicParts(r) {
		if (r.epicTask)
			return [
				el(
					"p",
					{ id: "epic-parent" },
					`Task ${r.epicTask.taskId} of epic `,
					link(`/runs/${r.epicTask.runId}`, r.epicTask.runId),
				),
			];
		const e = r.epic;
		if (!e) return [];
		return [
			el("h3", null, "Epic"),
			el(
				"p",
				{ id: "epic-phase" },
				"Phase ",
				el("b", null, e.phase.replace("_", " ")),
				` · ${e.done} of ${e.total} tasks done`,
				e.continues ? " · continues " : "",
				e.continues ? link(`/runs/${e.continues}`, e.continues) : "",
			),
			e.questions
				? el(
						"div",
						{ id: "epic-questions" },
						el("p", null, "The research needs answers before the epic can be planned:"),
						el("ul", null, ...e.questions.map((q) => el("li", null, q))),
					)
				: "",
			e.tasks.length
				? el(
						"table",
						{ id: "epic-tasks" },
						el(
							"tr",
							null,
							...["task", "title", "repo", "depends on", "status", "sub-issue", "run", "PRs"].map(
								(h) => el("th", null, h),
							),
						),
						...e.tasks.map((t) =>
							el(
								"tr",
								{ "data-task": t.id },
								el("td", null, t.id),
								el("td", { class: "title" }, t.title),
								el("td", null, t.repo),
								el("td", null, t.dependsOn.join(", ") || "–"),
								el(
									"td",
									{ class: "status" },
									badge(t.status),
									t.reason ? el("div", { class: "muted reason" }, t.reason) : "",
								),
								el(
									"td",
									{ class: "issue" },
									t.issue ? link(t.issue.url, t.issue.key || t.issue.url || "") : "–",
								),
								el("td", { class: "run" }, t.runId ? link(`/runs/${t.runId}`, t.runId) : "–"),
								el("td", null, ...prLinks(t.prUrls || [])),
							),
						),
					)
				: "",
		];
	}

	/** @param {RunState} state */
	function drawRun(state) {
		const r = state.run;
		if (!r || out()) return;
		if (!found("heading")) runSkeleton(state);
		const active = ACTIVE.includes(r.status);
		const c = r.cost;
		const all = r.costWithFollowUps;
		fill("heading", [r.issueKey, r.issueId, r.title], () => [
			r.issueKey || r.issueId,
			" ",
			r.title || "",
		]);
		// The elapsed time ticks each second while the run is active.
		fill("summary", [r.status, r.updatedAt, active ? Math.round(runDuration(r) ?? 0) : 0], () => [
			badge(r.status),
			" · ",
			active ? doing(r) : duration(runDuration(r)),
			" · started ",
			relative(r.createdAt),
			" by ",
			r.trigger,
			r.url ? " · " : "",
			r.url ? link(r.url, "issue") : "",
		]);
		fill("why", [r.status, r.error], () =>
			r.error
				? [
						el(
							"p",
							{ id: "run-error", class: errorClass(r.status) },
							r.status === "cancelled" ? `Cancelled: ${r.error}` : r.error,
						),
					]
				: [],
		);
		fill("cost", [c, all, r.limitUsd], () => [
			"Cost ",
			costEl(c),
			c.totalUsd === null
				? ` (at least ${money(c.knownUsd)}: ${c.unknown.join("; ")})`
				: ` (model ${money(c.modelUsd ?? 0)}, compute ${money(c.computeUsd)})`,
			` · ${Math.round(tokensOf(c) / 1000)}k tokens · ${duration(c.agentSeconds)} agent time`,
			r.limitUsd == null ? "" : ` · limit ${money(r.limitUsd)}`,
			all ? " · with its follow-up rounds " : "",
			all ? costEl(all) : "",
		]);
		fill("approvals", r.approvals || [], () =>
			(r.approvals || []).map((a) =>
				el(
					"p",
					{ class: "muted approved" },
					`Approved by ${a.by} (${a.via}) ${when(a.at)}: limit ${money(a.limitUsd)} at ${money(a.spentUsd)} spent`,
				),
			),
		);
		fill("approval-slot", [r.status, r.approval?.requestedAt, role], () => [approvalBox(state)]);
		// Only what the token may do is offered (GET /api/whoami).
		fill("actions", [active, role], () => {
			if (role !== "admin")
				return [
					el(
						"span",
						{ class: "muted", id: "read-only" },
						"Watching with the read-only token: cancel, retry and approve need the admin token.",
					),
				];
			const button = el(
				"button",
				{ id: active ? "cancel" : "retry" },
				active ? "Cancel run" : r.kind === "epic" ? "Continue the epic" : "Retry as a new run",
			);
			button.addEventListener("click", () =>
				act(r.runId, active ? "cancel" : "retry", state.notice),
			);
			return [button];
		});
		fill(
			"links",
			[
				r.prUrls,
				r.parentRunId,
				r.round,
				r.followUps,
				r.pendingFollowUps,
				r.followUpsStopped,
				r.plan,
			],
			() => [
				r.prUrls.length ? el("p", null, "Pull requests: ", ...prLinks(r.prUrls)) : "",
				r.parentRunId
					? el(
							"p",
							{ id: "round" },
							`Follow-up round ${r.round ? r.round.number : ""} of `,
							link(`/runs/${r.parentRunId}`, r.parentRunId),
						)
					: "",
				r.followUps.length || r.pendingFollowUps.length || r.followUpsStopped
					? el("h3", null, "Follow-up rounds")
					: "",
				r.followUps.length
					? el(
							"ol",
							{ id: "follow-ups" },
							...r.followUps.map((f) =>
								el(
									"li",
									null,
									link(`/runs/${f.runId}`, f.runId),
									` · ${f.trigger.replace("_", " ")} · ${f.status || ""} · ${when(f.at)}`,
								),
							),
						)
					: "",
				...r.pendingFollowUps.map((p) =>
					el(
						"p",
						null,
						`A ${p.trigger.replace("_", " ")} round starts ${when(p.dueAt)} on `,
						link(p.prUrl, p.prUrl),
					),
				),
				r.followUpsStopped
					? el("p", { class: "error" }, `CI rounds stopped: ${r.followUpsStopped.reason}`)
					: "",
				r.plan ? el("h3", null, "Plan") : "",
				r.plan
					? el(
							"ol",
							null,
							...r.plan.steps.map((p) =>
								el("li", null, `order ${p.order} · ${p.repo} — ${p.scope}`),
							),
						)
					: "",
			],
		);
		fill("epic", [r.epic, r.epicTask], () => epicParts(r));
		fill("steps", r.steps, () => [
			el(
				"tr",
				null,
				...[
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
				].map((h) => el("th", null, h)),
			),
			// A step's files a reader unfolded stay unfolded when the running step's update redraws the table.
			...stepRows(
				r,
				new Set(
					Array.from(
						$("steps").querySelectorAll("tr[data-step]:has(details.files[open])"),
						(tr) => /** @type {HTMLElement} */ (tr).dataset.step,
					),
				),
			),
		]);
		drawEvents(state);
		const pane = $("output");
		if (!state.events.some((e) => e.type === "agent.output")) {
			// Nothing from the agent: "yet" only while something may still come.
			const empty =
				found("output-empty") ||
				pane.appendChild(el("span", { id: "output-empty", class: "muted" }));
			empty.textContent = active ? "(no output yet)" : "(no output)";
		}
		tick();
	}

	/**
	 * A run paused at its cost limit: what it spent and, for the admin token, an Approve button with
	 * an optional new limit. Built once per request, so a limit being typed survives the redraws.
	 * @param {RunState} state
	 * @returns {HTMLElement | string}
	 */
	function approvalBox(state) {
		const r = state.run;
		const request = r && r.status === "awaiting_approval" ? r.approval : undefined;
		if (!r || !request) {
			state.approval = null;
			return "";
		}
		const key = `${request.requestedAt} ${role}`;
		if (state.approval && state.approval.key === key) return state.approval.box;
		const limit = el("input", {
			id: "approve-limit",
			inputmode: "decimal",
			size: "8",
			placeholder: String(request.proposedLimitUsd),
			"aria-label": "new limit in USD",
		});
		const form = el(
			"form",
			{ id: "approval", class: "approval" },
			el(
				"b",
				null,
				`Waiting for approval: spent ${money(request.spentUsd)} of ${money(request.limitUsd)}`,
			),
			` since ${when(request.requestedAt)}. `,
			...(role === "admin"
				? [
						"Approve to go on up to ",
						limit,
						` USD (empty: ${money(request.proposedLimitUsd)}) `,
						el("button", { id: "approve" }, "Approve"),
						el(
							"span",
							{ class: "muted" },
							" — or reply /lisa continue on its pull request or in its Linear session.",
						),
					]
				: [
						el(
							"span",
							{ class: "muted" },
							"The admin token approves here; or reply /lisa continue on its pull request or in its Linear session.",
						),
					]),
		);
		form.addEventListener("submit", (e) => {
			e.preventDefault();
			const raw = limit.value.trim().replace(/^\$/, "");
			const usd = Number(raw);
			if (raw && !(usd > 0)) {
				say(state.notice, "error", "The new limit is an amount in USD, such as 20");
				return;
			}
			act(r.runId, "approve", state.notice, raw ? { limitUsd: usd } : undefined);
		});
		state.approval = { key, box: form };
		return form;
	}

	/** @param {string} id */
	async function detail(id) {
		$("where").textContent = `run ${id}`;
		/** @type {RunState} */
		const state = {
			run: null,
			events: [],
			lastId: null,
			ended: false,
			missing: 0,
			notice: el("p", { id: "notice", hidden: "" }),
			approval: null,
			shown: 0,
		};
		let pending = false;
		const draw = () => {
			if (pending) return;
			pending = true;
			requestAnimationFrame(() => {
				pending = false;
				drawRun(state);
			});
		};
		// Active durations tick between updates.
		setInterval(() => state.run && !state.ended && draw(), 1000);
		await follow(id, state, draw);
	}

	// ── start ───────────────────────────────────────────────────────────────────────────────
	/** @param {unknown} err */
	function shown(err) {
		if (err instanceof Unauthorized || out()) return;
		const box = found("failure") || view.appendChild(el("p", { class: "error", id: "failure" }));
		box.textContent = /** @type {Error} */ (err).message;
	}
	/** The wall view's switch: the same page with or without `wall=1`, the rest of the URL kept. */
	function wallToggle() {
		const q = new URLSearchParams(location.search);
		if (wall) q.delete("wall");
		else q.set("wall", "1");
		const a = el(
			"a",
			{ id: "wall-toggle", href: `${location.pathname}${q.size ? `?${q}` : ""}` },
			wall ? "normal view" : "wall view",
		);
		$("modes").replaceChildren(a);
	}
	let started = false;
	async function start() {
		if (!token()) {
			login.hidden = false;
			return;
		}
		if (started) return location.reload();
		started = true;
		wallToggle();
		try {
			/** @type {z.output<typeof whoamiAnswer>} */
			const me = await api("/api/whoami");
			role = me.role;
		} catch (err) {
			// A server without /api/whoami: offer nothing the token may not do.
			if (err instanceof Unauthorized) return;
		}
		// Relative times ("3 min ago") move on between updates.
		setInterval(tick, 10000);
		stats().catch(shown);
		setInterval(() => token() && stats().catch(shown), 15000);
		const id = location.pathname.match(/^\/runs\/([A-Za-z0-9]+)$/)?.[1];
		if (id) {
			detail(id).catch(shown);
			return;
		}
		$("where").textContent = "runs";
		view.replaceChildren(filters());
		list().catch(shown);
		setInterval(() => token() && list().catch(shown), 3000);
	}
	(code ? redeem(code) : Promise.resolve()).then(start).catch(shown);
}
