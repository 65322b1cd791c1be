import { DASHBOARD_JS, PAGE_MODULES, UPLOT_CSS, UPLOT_JS } from "./assets";
import { SIGN_IN_CODE_TTL_MS } from "./sign-in";

// The dashboard page: static HTML over the runs API, no build step. It holds no data itself; the
// browser asks for a token once (the read-only one is enough), or trades a printed link's one-time
// code for the read-only token (sign-in.ts), and keeps it in localStorage. Its script is the ES
// modules of src/dashboard, served from files as they are (assets.ts), so the page's CSP allows no
// inline script; the page preloads them all at once rather than one import after another.

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lisa runs</title>
<style>
  :root { --ink: #1d2330; --muted: #6b7280; --line: #e3e6eb; --ok: #137333; --bad: #b3261e; --busy: #8a5a00; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: var(--ink); background: #f6f7f9; }
  header { background: var(--ink); color: #fff; padding: 10px 20px; display: flex; gap: 16px; align-items: center; }
  header a { color: #fff; text-decoration: none; font-weight: 600; }
  main { padding: 16px 20px; max-width: 1280px; }
  #stats { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 14px; }
  .stat { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 110px; }
  .stat b { display: block; font-size: 20px; }
  .stat span { color: var(--muted); font-size: 12px; }
  .filters { display: flex; gap: 8px; align-items: center; margin-bottom: 10px; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-size: 12px; color: var(--muted); font-weight: 600; }
  #runs td:first-child, #runs td:nth-child(2), td.started, td.now { white-space: nowrap; }
  .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #fdf0d5; color: var(--busy); }
  .badge.succeeded, .badge.completed, .badge.done { background: #e6f4ea; color: var(--ok); }
  .badge.failed, .badge.crashed, .badge.stuck, .badge.blocked { background: #fce8e6; color: var(--bad); }
  .badge.cancelled, .badge.pending, .badge.planned, .badge.waiting { background: #eef0f3; color: var(--muted); }
  .badge.awaiting_approval, .badge.in_review { background: #e8eafd; color: #3730a3; }
  .tag { display: inline-block; margin-right: 6px; padding: 0 6px; border: 1px solid var(--line); border-radius: 4px; font-size: 11px; color: var(--muted); text-transform: uppercase; }
  .tag.epic { border-color: #c7cbf6; color: #3730a3; }
  .reason { font-size: 12px; }
  #epic-tasks td.issue, #epic-tasks td.run, #epic-tasks th { white-space: nowrap; }
  .unknown { text-decoration: underline dotted; cursor: help; }
  .attempts { font-size: 12px; }
  .files summary { cursor: pointer; font-size: 12px; color: var(--muted); }
  .files ul { margin: 4px 0 0; padding-left: 16px; font-size: 12px; }
  .approval { background: #e8eafd; border: 1px solid #c7cbf6; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
  .error { color: var(--bad); white-space: pre-wrap; }
  .muted { color: var(--muted); }
  pre.tail { background: #10141c; color: #d7dde8; padding: 10px; max-height: 320px; overflow: auto; white-space: pre-wrap; margin: 0; }
  #login { background: #fff; padding: 16px; max-width: 520px; }
  code { background: #eef0f3; padding: 1px 4px; border-radius: 3px; }
  button { cursor: pointer; }
  .notice { margin: 6px 0; padding: 6px 10px; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
  .notice.error { border-color: #f3b8b3; }
  .notice .dismiss { border: 0; background: none; font-size: 16px; line-height: 1; color: var(--muted); }
  #modes { margin-left: auto; }
  #charts { display: flex; flex-wrap: wrap; gap: 14px; margin-bottom: 14px; }
  .chart { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; }
  .chart h4 { margin: 0 0 4px; font-size: 13px; }
  .uplot .u-legend { font-size: 12px; }
  /* The wall view (?wall=1): a screen across the room — full width, large type. */
  body.wall { font-size: 20px; }
  body.wall main { max-width: none; padding: 16px 28px; }
  body.wall .stat b { font-size: 32px; }
  body.wall .stat span, body.wall th, body.wall .badge { font-size: 16px; }
  body.wall .chart h4 { font-size: 18px; }
  body.wall .filters { display: none; }
</style>
<link rel="stylesheet" href="${UPLOT_CSS}">
${PAGE_MODULES.map((url) => `<link rel="modulepreload" href="${url}">`).join("\n")}
</head>
<body>
<header><a href="/">Lisa</a><span class="muted" id="where"></span><span class="muted" id="live"></span><span id="modes"></span></header>
<main>
  <form id="login" hidden>
    <p>Paste an API token: the read-only token is enough to watch (<code>npm start</code> prints both; in AWS they are the <code>ReadToken</code> and <code>ApiToken</code> secrets).</p>
    <p id="spent" class="error" hidden>That sign-in link was used already or has expired: a link signs in once, within ${SIGN_IN_CODE_TTL_MS / 60_000} minutes. Paste the read token (<code>npm start</code> prints it).</p>
    <p id="refused" class="error" hidden>That token was refused (401): it is not one of this Lisa's tokens. Paste its API token or read token.</p>
    <input id="token" type="password" size="44" autocomplete="off"> <button>Open</button>
  </form>
  <section id="stats"></section>
  <div id="view"></div>
</main>
<script src="${UPLOT_JS}"></script>
<script type="module" src="${DASHBOARD_JS}"></script>
</body>
</html>
`;
