// @ts-check
/** @import { z } from "zod" */
/** @import { approvingAnswer, costAnswer, eventsAnswer, runAnswer, runsAnswer, startedAnswer, statsAnswer } from "./schemas" */

// The dashboard's browser script, plain JavaScript checked by tsc against the DOM
// (tsconfig.dashboard.json). dashboard.ts serves this function's own source as /dashboard.js (no
// build step), so it must be self-contained: it references nothing outside its body but the
// browser's globals (the type imports are comments). Everything from the API is inserted as text,
// and only http(s) URLs become links. The run page follows /api/runs/:id/stream with fetch
// (EventSource cannot send the Authorization header).

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
 * @property {HTMLElement} notice What an action answered: kept across redraws.
 * @property {{ key: string, box: HTMLElement } | null} approval The approval form of the request shown (kept across redraws, so a limit being typed survives them).
 */

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
	/** "$1.84", "$0.0123" under a dollar (src/domain/cost.ts `usd`). */
	const money = (/** @type {number} */ v) =>
		v >= 1 || v === 0 ? `$${v.toFixed(2)}` : `$${v.toFixed(4)}`;
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
		const t = c.tokens;
		const ran = c.agentSeconds > 0 || t.input + t.output + t.cacheRead + t.cacheWrite > 0;
		return el("span", null, ran || c.totalUsd > 0 ? money(c.totalUsd) : "–");
	}
	const prLinks = (/** @type {string[]} */ urls) =>
		urls.flatMap((u) => [link(u, u.replace(/^https?:\/\/[^/]+\//, "")), el("br")]);
	const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

	const token = () => localStorage.getItem("lisaToken");
	const auth = () => ({ authorization: `Bearer ${token()}` });
	class Unauthorized extends Error {}
	function unauthorized() {
		localStorage.removeItem("lisaToken");
		login.hidden = false;
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
		const res = await fetch(path, Object.assign({}, init, { headers: auth() }));
		if (res.status === 401) throw unauthorized();
		const body = await res.json().catch(() => ({}));
		if (!res.ok) throw new Error(body.error || res.statusText);
		return body;
	}

	login.addEventListener("submit", (e) => {
		e.preventDefault();
		localStorage.setItem("lisaToken", /** @type {HTMLInputElement} */ ($("token")).value.trim());
		login.hidden = true;
		start();
	});

	// ── stats header ────────────────────────────────────────────────────────────────────────
	/** @param {string} label @param {Kid} value */
	const stat = (label, value) =>
		el("div", { class: "stat" }, el("b", null, value), el("span", null, label));
	/** `money`, or "–" when unknown. @param {number | null} v */
	const dollars = (v) => (v == null ? "–" : money(v));
	async function stats() {
		/** @type {z.output<typeof statsAnswer>} */
		const s = await api("/api/stats");
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
			history.replaceState(null, "", `/${next.toString() ? `?${next}` : ""}`);
			list();
		};
		status.addEventListener("change", apply);
		repo.addEventListener("change", apply);
		return el("div", { class: "filters" }, status, repo);
	}
	async function list() {
		const q = new URLSearchParams(location.search);
		q.set("limit", "50");
		/** @type {z.output<typeof runsAnswer>} */
		const { runs } = await api(`/api/runs?${q}`);
		const rows = runs.map((r) =>
			el(
				"tr",
				{ "data-run": r.id },
				el("td", null, link(`/runs/${r.id}`, r.issueKey || r.issueId)),
				el("td", null, badge(r.status)),
				el("td", { class: "title" }, r.url ? link(r.url, r.title || r.issueId) : r.title || ""),
				el("td", null, r.repos.join(", ")),
				el("td", null, r.provider || ""),
				el("td", null, duration(runDuration(r))),
				el("td", { class: "cost" }, costEl(r.cost)),
				el("td", null, ...prLinks(r.prUrls)),
				el("td", { class: "muted" }, when(r.createdAt)),
				el("td", { class: "error" }, r.error ? r.error.slice(0, 160) : ""),
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
			table.append(el("tr", null, el("td", { colspan: "10", class: "muted" }, "No runs yet.")));
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
		for (;;) {
			/** @type {Record<string, string>} */
			const headers = auth();
			if (state.lastId) headers["last-event-id"] = state.lastId;
			/** @type {Response} */
			let res;
			try {
				res = await fetch(`/api/runs/${id}/stream`, { headers });
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

	/**
	 * @param {string} id
	 * @param {"cancel" | "retry" | "approve"} action
	 * @param {{ limitUsd: number }} [body]
	 */
	async function act(id, action, body) {
		const notice = $("notice");
		try {
			/** @type {z.output<typeof startedAnswer> & Partial<z.output<typeof approvingAnswer>>} */
			const out = await api(`/api/runs/${id}/${action}`, {
				method: "POST",
				...(body ? { body: JSON.stringify(body) } : {}),
			});
			notice.className = "muted";
			notice.replaceChildren(
				action === "retry"
					? el("span", null, "Retrying as ", link(`/runs/${out.id}`, out.id))
					: action === "approve"
						? `Approved: the run goes on up to ${money(out.limitUsd ?? 0)}.`
						: "Cancelling…",
			);
		} catch (err) {
			if (err instanceof Unauthorized) return;
			notice.className = "error";
			notice.textContent = /** @type {Error} */ (err).message;
		}
	}

	/** @param {RunState} state */
	function drawRun(state) {
		const r = state.run;
		if (!r) return;
		const output = state.events.filter((e) => e.type === "agent.output").slice(-40);
		const steps = r.steps.map((s) =>
			el(
				"tr",
				null,
				el("td", null, s.index + 1),
				el("td", { title: s.scope || "" }, s.kind === "plan" ? "(plan)" : s.repo),
				el("td", null, badge(s.status)),
				el("td", null, s.attempt),
				el("td", null, s.agentState ? badge(s.agentState) : ""),
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
				el("td", null, s.prUrl ? link(s.prUrl, s.prUrl) : s.branch || ""),
				el(
					"td",
					{ class: "muted" },
					s.heartbeatAt ? new Date(s.heartbeatAt).toLocaleTimeString() : "",
				),
				el("td", { class: "error" }, s.error || ""),
			),
		);
		const timeline = state.events
			.slice(-200)
			.map((e) =>
				el(
					"tr",
					null,
					el("td", { class: "muted" }, when(e.at)),
					el("td", null, e.type),
					el("td", null, e.step == null ? "" : e.step + 1),
					el("td", null, e.message),
				),
			);
		const active = ACTIVE.includes(r.status);
		const c = r.cost;
		const all = r.costWithFollowUps;
		// An input being typed in loses its focus when the view is drawn again: give it back.
		const focused = document.activeElement;
		const caret =
			focused instanceof HTMLInputElement
				? { start: focused.selectionStart, end: focused.selectionEnd }
				: null;
		view.replaceChildren(
			el("h2", null, r.issueKey || r.issueId, " ", r.title || ""),
			el(
				"p",
				{ id: "summary" },
				badge(r.status),
				" · ",
				duration(runDuration(r)),
				" · started ",
				when(r.createdAt),
				" by ",
				r.trigger,
				r.url ? " · " : "",
				r.url ? link(r.url, "issue") : "",
			),
			r.error ? el("p", { class: "error", id: "run-error" }, r.error) : "",
			el(
				"p",
				{ id: "cost" },
				"Cost ",
				costEl(c),
				c.totalUsd === null
					? ` (at least ${money(c.knownUsd)}: ${c.unknown.join("; ")})`
					: ` (model ${money(c.modelUsd ?? 0)}, compute ${money(c.computeUsd)})`,
				` · ${Math.round((c.tokens.input + c.tokens.output + c.tokens.cacheRead + c.tokens.cacheWrite) / 1000)}k tokens · ${duration(c.agentSeconds)} agent time`,
				r.limitUsd == null ? "" : ` · limit ${money(r.limitUsd)}`,
				all ? " · with its follow-up rounds " : "",
				all ? costEl(all) : "",
			),
			...(r.approvals || []).map((a) =>
				el(
					"p",
					{ class: "muted approved" },
					`Approved by ${a.by} (${a.via}) ${when(a.at)}: limit ${money(a.limitUsd)} at ${money(a.spentUsd)} spent`,
				),
			),
			approvalBox(state),
			el(
				"p",
				null,
				el(
					"button",
					{ id: active ? "cancel" : "retry" },
					active ? "Cancel run" : "Retry as a new run",
				),
			),
			state.notice,
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
						...r.plan.steps.map((p) => el("li", null, `order ${p.order} · ${p.repo} — ${p.scope}`)),
					)
				: "",
			el("h3", null, "Steps"),
			el(
				"table",
				{ id: "steps" },
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
				...steps,
			),
			el("h3", null, "Agent output"),
			el(
				"pre",
				{ class: "tail", id: "output" },
				output.length ? output.map((e) => e.message).join("\n") : "(no output yet)",
			),
			el("h3", null, "Timeline"),
			el(
				"table",
				{ id: "timeline" },
				el("tr", null, ...["time", "event", "step", "message"].map((h) => el("th", null, h))),
				...timeline,
			),
		);
		if (
			focused instanceof HTMLInputElement &&
			focused !== document.activeElement &&
			focused.isConnected
		) {
			focused.focus();
			if (caret) focused.setSelectionRange(caret.start, caret.end);
		}
		$(active ? "cancel" : "retry").addEventListener("click", () =>
			act(r.runId, active ? "cancel" : "retry"),
		);
	}

	/**
	 * A run paused at its cost limit: what it spent, and an Approve button (admin token) with an
	 * optional new limit. Built once per request, so a limit being typed survives the redraws.
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
		if (state.approval && state.approval.key === request.requestedAt) return state.approval.box;
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
			` since ${when(request.requestedAt)}. Approve to go on up to `,
			limit,
			` USD (empty: ${money(request.proposedLimitUsd)}) `,
			el("button", { id: "approve" }, "Approve"),
			el(
				"span",
				{ class: "muted" },
				" — or reply /lisa continue on its pull request or in its Linear session.",
			),
		);
		form.addEventListener("submit", (e) => {
			e.preventDefault();
			const raw = limit.value.trim().replace(/^\$/, "");
			const usd = Number(raw);
			if (raw && !(usd > 0)) {
				state.notice.className = "error";
				state.notice.textContent = "The new limit is an amount in USD, such as 20";
				return;
			}
			act(r.runId, "approve", raw ? { limitUsd: usd } : undefined);
		});
		state.approval = { key: request.requestedAt, box: form };
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
			notice: el("p", { id: "notice" }),
			approval: null,
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
		if (err instanceof Unauthorized) return;
		const box = found("failure") || view.appendChild(el("p", { class: "error", id: "failure" }));
		box.textContent = /** @type {Error} */ (err).message;
	}
	let started = false;
	function start() {
		if (!token()) {
			login.hidden = false;
			return;
		}
		if (started) return location.reload();
		started = true;
		stats().catch(shown);
		setInterval(() => token() && stats().catch(shown), 15000);
		const id = location.pathname.match(/^\/runs\/([A-Za-z0-9]+)$/)?.[1];
		if (id) return detail(id).catch(shown);
		$("where").textContent = "runs";
		view.replaceChildren(filters());
		list().catch(shown);
		setInterval(() => token() && list().catch(shown), 3000);
	}
	start();
}
