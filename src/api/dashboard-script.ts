// The dashboard's script, plain browser JavaScript (no build step). Everything from the API is
// inserted as text, and only http(s) URLs become links. The run page follows
// /api/runs/:id/stream with fetch (EventSource cannot send the Authorization header).

export const DASHBOARD_JS = String.raw`"use strict";
const $ = (id) => document.getElementById(id);
const view = $("view"), login = $("login"), statsBar = $("stats");
const ACTIVE = ["queued", "planning", "running"];
const STATUSES = ["", ...ACTIVE, "succeeded", "failed", "cancelled"];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k == null ? "" : String(k)));
  return e;
}
// Only web links become anchors: a javascript: or data: URL from the API stays plain text.
const link = (href, text) =>
  /^(https?:\/\/|\/runs\/)/i.test(href || "") ? el("a", { href, rel: "noopener noreferrer" }, text) : document.createTextNode(text || "");
const badge = (status) => el("span", { class: "badge " + status }, status);
const pct = (r) => (r == null ? "–" : Math.round(r * 100) + "%");
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");
function duration(s) {
  if (s == null) return "–";
  s = Math.round(s);
  if (s < 60) return s + "s";
  const m = Math.floor(s / 60);
  return m < 60 ? m + "m " + (s % 60) + "s" : Math.floor(m / 60) + "h " + (m % 60) + "m";
}
// An active run's duration grows between updates: count it here.
const runDuration = (r) => (ACTIVE.includes(r.status) ? Math.max(0, (Date.now() - Date.parse(r.createdAt)) / 1000) : r.durationSeconds);
const prLinks = (urls) => urls.flatMap((u) => [link(u, u.replace(/^https?:\/\/[^/]+\//, "")), el("br")]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const token = () => localStorage.getItem("lisaToken");
const auth = () => ({ authorization: "Bearer " + token() });
class Unauthorized extends Error {}
function unauthorized() {
  localStorage.removeItem("lisaToken");
  login.hidden = false;
  view.replaceChildren();
  statsBar.replaceChildren();
  return new Unauthorized("unauthorized");
}
async function api(path, init) {
  const res = await fetch(path, Object.assign({}, init, { headers: auth() }));
  if (res.status === 401) throw unauthorized();
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

login.addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem("lisaToken", $("token").value.trim());
  login.hidden = true;
  start();
});

// ── stats header ──────────────────────────────────────────────────────────────────────────
const stat = (label, value) => el("div", { class: "stat" }, el("b", null, value), el("span", null, label));
async function stats() {
  const s = await api("/api/stats");
  const c = s.counts;
  statsBar.replaceChildren(
    stat("runs, 30 days", s.total),
    stat("active", c.queued + c.planning + c.running),
    stat("succeeded", c.succeeded),
    stat("failed", c.failed),
    stat("success rate", pct(s.successRate)),
    stat("time to PR, median", duration(s.timeToPr.medianSeconds)),
    stat("time to PR, p90", duration(s.timeToPr.p90Seconds)),
    stat("agent time", duration(s.agentSeconds)),
  );
}

// ── runs list ─────────────────────────────────────────────────────────────────────────────
function filters() {
  const q = new URLSearchParams(location.search);
  const status = el("select", { id: "status-filter" }, ...STATUSES.map((s) => el("option", { value: s }, s || "all statuses")));
  status.value = q.get("status") || "";
  const repo = el("input", { id: "repo-filter", placeholder: "repo", size: "14" });
  repo.value = q.get("repo") || "";
  const apply = () => {
    const next = new URLSearchParams();
    if (status.value) next.set("status", status.value);
    if (repo.value.trim()) next.set("repo", repo.value.trim());
    history.replaceState(null, "", "/" + (next.toString() ? "?" + next : ""));
    list();
  };
  status.addEventListener("change", apply);
  repo.addEventListener("change", apply);
  return el("div", { class: "filters" }, status, repo);
}
async function list() {
  const q = new URLSearchParams(location.search);
  q.set("limit", "50");
  const { runs } = await api("/api/runs?" + q);
  const rows = runs.map((r) =>
    el("tr", { "data-run": r.id },
      el("td", null, link("/runs/" + r.id, r.issueKey || r.issueId)),
      el("td", null, badge(r.status)),
      el("td", { class: "title" }, r.url ? link(r.url, r.title || r.issueId) : r.title || ""),
      el("td", null, r.repos.join(", ")),
      el("td", null, r.provider || ""),
      el("td", null, duration(runDuration(r))),
      el("td", null, ...prLinks(r.prUrls)),
      el("td", { class: "muted" }, when(r.createdAt)),
      el("td", { class: "error" }, r.error ? r.error.slice(0, 160) : "")));
  const table = el("table", { id: "runs" },
    el("tr", null, ...["issue", "status", "title", "repos", "provider", "duration", "pull requests", "started", "error"].map((h) => el("th", null, h))),
    ...rows);
  if (!runs.length) table.append(el("tr", null, el("td", { colspan: "9", class: "muted" }, "No runs yet.")));
  $("runs") ? $("runs").replaceWith(table) : view.append(table);
}

// ── one run, live ─────────────────────────────────────────────────────────────────────────
async function* sse(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const m = { event: "message", data: [] };
      for (const line of block.split("\n")) {
        if (!line || line[0] === ":") continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") m.data.push(value);
        else if (field === "event") m.event = value;
        else if (field === "id") m.id = value;
        else if (field === "retry") m.retry = Number(value);
      }
      if (m.data.length) yield Object.assign(m, { data: m.data.join("\n") });
    }
  }
}

async function follow(id, state, draw) {
  let retry = 2000;
  for (;;) {
    const headers = auth();
    if (state.lastId) headers["last-event-id"] = state.lastId;
    let res;
    try {
      res = await fetch("/api/runs/" + id + "/stream", { headers });
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
      for await (const m of sse(res.body)) {
        if (m.retry) retry = m.retry;
        if (m.event === "run") state.run = JSON.parse(m.data);
        if (m.event === "timeline") {
          state.events.push(JSON.parse(m.data));
          state.lastId = m.id;
        }
        if (m.event === "end") state.ended = true;
        draw();
      }
    } catch {}
    $("live").textContent = "";
    if (state.ended) return;
    // A buffering gateway ends each answer; ask again after what the server said.
    await sleep(retry);
  }
}

async function act(id, action) {
  const notice = $("notice");
  try {
    const out = await api("/api/runs/" + id + "/" + action, { method: "POST" });
    notice.className = "muted";
    notice.replaceChildren(action === "retry" ? el("span", null, "Retrying as ", link("/runs/" + out.id, out.id)) : "Cancelling…");
  } catch (err) {
    if (err instanceof Unauthorized) return;
    notice.className = "error";
    notice.textContent = err.message;
  }
}

function drawRun(state) {
  const r = state.run;
  if (!r) return;
  const output = state.events.filter((e) => e.type === "agent.output").slice(-40);
  const steps = r.steps.map((s) =>
    el("tr", null,
      el("td", null, s.index + 1),
      el("td", { title: s.scope || "" }, s.kind === "plan" ? "(plan)" : s.repo),
      el("td", null, badge(s.status)),
      el("td", null, s.attempt),
      el("td", null, s.agentState ? badge(s.agentState) : ""),
      el("td", null, s.provider || ""),
      el("td", null, s.prUrl ? link(s.prUrl, s.prUrl) : s.branch || ""),
      el("td", { class: "muted" }, s.heartbeatAt ? new Date(s.heartbeatAt).toLocaleTimeString() : ""),
      el("td", { class: "error" }, s.error || "")));
  const timeline = state.events.slice(-200).map((e) =>
    el("tr", null, el("td", { class: "muted" }, when(e.at)), el("td", null, e.type), el("td", null, e.step == null ? "" : e.step + 1), el("td", null, e.message)));
  const active = ACTIVE.includes(r.status);
  view.replaceChildren(
    el("h2", null, r.issueKey || r.issueId, " ", r.title || ""),
    el("p", { id: "summary" }, badge(r.status), " · ", duration(runDuration(r)), " · started ", when(r.createdAt), " by ", r.trigger,
      r.url ? " · " : "", r.url ? link(r.url, "issue") : ""),
    r.error ? el("p", { class: "error", id: "run-error" }, r.error) : "",
    el("p", null, el("button", { id: active ? "cancel" : "retry" }, active ? "Cancel run" : "Retry as a new run")),
    el("p", { id: "notice" }),
    r.prUrls.length ? el("p", null, "Pull requests: ", ...prLinks(r.prUrls)) : "",
    r.plan ? el("h3", null, "Plan") : "",
    r.plan ? el("ol", null, ...r.plan.steps.map((p) => el("li", null, "order " + p.order + " · " + p.repo + " — " + p.scope))) : "",
    el("h3", null, "Steps"),
    el("table", { id: "steps" }, el("tr", null, ...["#", "repo", "status", "attempt", "agent", "provider", "PR / branch", "heartbeat", "error"].map((h) => el("th", null, h))), ...steps),
    el("h3", null, "Agent output"),
    el("pre", { class: "tail", id: "output" }, output.length ? output.map((e) => e.message).join("\n") : "(no output yet)"),
    el("h3", null, "Timeline"),
    el("table", { id: "timeline" }, el("tr", null, ...["time", "event", "step", "message"].map((h) => el("th", null, h))), ...timeline));
  $(active ? "cancel" : "retry").addEventListener("click", () => act(r.runId, active ? "cancel" : "retry"));
}

async function detail(id) {
  $("where").textContent = "run " + id;
  const state = { run: null, events: [], lastId: null, ended: false, missing: 0 };
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

// ── start ─────────────────────────────────────────────────────────────────────────────────
function shown(err) {
  if (err instanceof Unauthorized) return;
  const box = $("failure") || view.appendChild(el("p", { class: "error", id: "failure" }));
  box.textContent = err.message;
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
  const m = location.pathname.match(/^\/runs\/([A-Za-z0-9]+)$/);
  if (m) return detail(m[1]).catch(shown);
  $("where").textContent = "runs";
  view.replaceChildren(filters());
  list().catch(shown);
  setInterval(() => token() && list().catch(shown), 3000);
}
start();
`;
