// The dashboard: one static page and its script over the runs API. It holds no data itself; the
// browser asks for the API token once and keeps it in localStorage. Everything from the API is
// inserted as text, and only http(s) URLs become links.

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lisa runs</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { background: #1d2330; color: #fff; padding: 10px 20px; display: flex; gap: 16px; align-items: center; }
  header a { color: #fff; text-decoration: none; font-weight: 600; }
  main { padding: 20px; max-width: 1100px; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
  .status { font-weight: 600; }
  .succeeded { color: #137333; } .failed { color: #b3261e; } .cancelled { color: #6b7280; }
  .running, .planning, .queued, .launching, .pending { color: #8a5a00; }
  .error { color: #b3261e; white-space: pre-wrap; }
  #login { background: #fff; padding: 16px; max-width: 480px; }
  code { background: #eef0f3; padding: 1px 4px; border-radius: 3px; }
  .muted { color: #6b7280; }
</style>
</head>
<body>
<header><a href="/">Lisa</a><span class="muted" id="where"></span></header>
<main>
  <form id="login" hidden>
    <p>Paste the API token (<code>npm start</code> prints it; in AWS it is the <code>LisaApiToken</code> secret).</p>
    <input id="token" type="password" size="40" autocomplete="off"> <button>Open</button>
  </form>
  <div id="view"></div>
</main>
<script src="/dashboard.js"></script>
</body>
</html>
`;

/** Served as /dashboard.js, so the page's CSP allows no inline script. */
export const DASHBOARD_JS = `const view = document.getElementById("view");
const login = document.getElementById("login");
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k ?? ""));
  return e;
};
// Only web links become anchors: a javascript: or data: URL from the API stays plain text.
const link = (href, text) =>
  /^(https?:\\/\\/|\\/runs\\/)/i.test(href ?? "")
    ? el("a", { href, rel: "noopener noreferrer" }, text)
    : document.createTextNode(text ?? "");
async function api(path) {
  const res = await fetch(path, { headers: { authorization: "Bearer " + localStorage.getItem("lisaToken") } });
  if (res.status === 401) { localStorage.removeItem("lisaToken"); showLogin(); throw new Error("unauthorized"); }
  if (!res.ok) throw new Error((await res.json()).error || res.statusText);
  return res.json();
}
function showLogin() { login.hidden = false; view.replaceChildren(); }
login.addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem("lisaToken", document.getElementById("token").value.trim());
  login.hidden = true; render();
});
const when = (iso) => iso ? new Date(iso).toLocaleString() : "";
async function list() {
  document.getElementById("where").textContent = "runs";
  const { runs } = await api("/api/runs?limit=50");
  const rows = runs.map((r) => el("tr", {},
    el("td", {}, link("/runs/" + r.id, r.id)),
    el("td", { class: "status " + r.status }, r.status),
    el("td", {}, r.url ? link(r.url, r.issueKey || r.issueId) : (r.issueKey || r.issueId), " ", r.title || ""),
    el("td", {}, ...r.prUrls.flatMap((u) => [link(u, u.replace(/^https?:\\/\\/[^/]+\\//, "")), el("br")])),
    el("td", { class: "muted" }, when(r.updatedAt))));
  view.replaceChildren(el("table", {}, el("tr", {}, ...["run", "status", "issue", "pull requests", "updated"].map((h) => el("th", {}, h))), ...rows));
}
async function detail(id) {
  document.getElementById("where").textContent = "run " + id;
  const [run, { events }] = await Promise.all([api("/api/runs/" + id), api("/api/runs/" + id + "/events")]);
  const steps = run.steps.map((s) => el("tr", {},
    el("td", {}, String(s.index + 1)), el("td", { title: s.scope || "" }, s.kind === "plan" ? "(plan)" : s.repo), el("td", { class: "status " + s.status }, s.status),
    el("td", {}, String(s.attempt)), el("td", {}, s.agentState || ""), el("td", {}, s.provider || ""),
    el("td", {}, s.prUrl ? link(s.prUrl, s.prUrl) : (s.branch || "")), el("td", { class: "error" }, s.error || "")));
  const timeline = events.map((e) => el("tr", {}, el("td", { class: "muted" }, when(e.at)), el("td", {}, e.type), el("td", {}, e.message)));
  view.replaceChildren(
    el("h2", {}, run.issueKey || run.issueId, " ", run.title || ""),
    el("p", {}, el("span", { class: "status " + run.status }, run.status), " · started ", when(run.createdAt),
      run.url ? " · " : "", run.url ? link(run.url, "issue") : ""),
    run.error ? el("p", { class: "error" }, run.error) : "",
    run.plan ? el("h3", {}, "Plan") : "",
    run.plan ? el("ol", {}, ...run.plan.steps.map((p) => el("li", {}, "order " + p.order + " · " + p.repo + " — " + p.scope))) : "",
    el("h3", {}, "Steps"),
    el("table", {}, el("tr", {}, ...["#", "repo", "status", "attempt", "agent", "provider", "PR / branch", "error"].map((h) => el("th", {}, h))), ...steps),
    el("h3", {}, "Timeline"),
    el("table", {}, ...timeline));
}
async function render() {
  if (!localStorage.getItem("lisaToken")) return showLogin();
  const m = location.pathname.match(/^\\/runs\\/([A-Za-z0-9]+)$/);
  try { await (m ? detail(m[1]) : list()); }
  catch (err) { if (err.message !== "unauthorized") view.replaceChildren(el("p", { class: "error" }, err.message)); }
}
render();
setInterval(() => { if (login.hidden) render(); }, 3000);
`;
