#!/usr/bin/env node
// A fake agent CLI (claude, gemini, opencode, codex) honouring the real argv contract. It behaves
// like an agent that did the work: edits a file, commits, writes .lisa-manifest.json. Directives in
// the prompt (lines "lisa-fake: <directive>", e.g. in the issue description) change its behaviour;
// "lisa-fake[claude,codex]: …" applies only to those CLIs, "lisa-fake@web: …" only to the step of
// repo web and "lisa-fake@plan: …" only to planning (the two combine: "lisa-fake[gemini]@api: …"):
//   exit=N · stderr=<text> · sleep=N (seconds, printing a line per second)
//   stdout=<text> (repeatable: a line each, in order; e.g. Claude Code's `init` and `result` events)
//   hang (no output, never exits; starts a child that hangs too) · no-commit · empty-commit
//   no-manifest · bad-manifest · manifest=<json> · touch=<path> · print-env=<VAR>
//   broken-until-retry (writes status.txt "broken", or "ok" once the prompt is a retry)
//   scan-secrets[=ancestors] (reads every /proc/<pid>/environ it can — or only its ancestors' — and
//     logs each secret-looking variable it found: what an agent could steal from the task)
//   leave-running (leaves a watcher in a session of its own, `setsid`, out of reach of the process
//     group kill, that keeps scanning /proc like scan-secrets and logs what it finds)
//   call-model=<[{model, path?, key?}, …]> (asks ANTHROPIC_BASE_URL itself with ANTHROPIC_API_KEY, or the
//     key given, and logs each answer as `modelCall`: an agent using its model endpoint directly)
//   reach=<[{tcp: "host:port"} | {dns: name} | {proxy: url}, …]> (tries each way out: a direct TCP
//     connection, a name lookup, a request through $HTTPS_PROXY — CONNECT for https, forwarded for
//     http — and logs each outcome as `reach`: an agent sending the code somewhere)
//   run=<file> (a hostile agent: runs `bash <file>` in its directory once its change is committed,
//     before the manifest; the script is the attack) · kill-self (dies of SIGKILL, as out of memory)
// A planning prompt ("…write the plan file `<path>`…") is answered with a plan instead of code:
//   plan=<json> (written as is; default: every listed repo, one order each, in the listed order)
//   plan-first=<json> (the first try's plan; a retry after Lisa rejected it writes plan=)
//   plan-scribble (also writes into every checkout, which Lisa must discard; in the epic phases too)
// An epic's research prompt ("…write the epic research file `<path>`…", target @research) is answered with research.md,
// its plan prompt ("…write the epic plan into `<dir>`…", @epic_plan) with plan.md and tasks/ in that directory
// (values are JSON; the attempt is read from the prompt's [RETRY - MUST COMPLETE] / [FINAL ATTEMPT]):
//   research=<string> (default: every section, naming the listed repos; null writes nothing)
//   research-first=<string> · research-second=<string> (that attempt's instead)
//   research-pad=N (appends N bytes to what it writes: an oversized file)
//   epic-plan=<{"plan.md": …, "tasks/01-x.md": …}> (default: one task per listed repo, chained)
//   epic-plan-first=<…> · epic-plan-second=<…> · epic-link=<{"tasks/02-x.md": "/etc/passwd"}>
//     (symbolic links it makes in the plan's directory, which Lisa must not follow)
// A follow-up round's prompt ("You are continuing the work on pull request …") is answered on the
// pull request's branch: the change is appended to the file (so every round changes something),
// committed as "fix: <title> (follow-up)", and the round's manifest is written instead of a PR's:
//   {"summary": "fake round", "replies": [{"comment": <id>, "body": "fake reply to <id>"}, …]}, one
//   reply per "- Review comment <id>:" line of the prompt (even one inside a fenced comment, which
//   Lisa must drop). no-commit makes a round that changes nothing; the other directives apply.
// A prompt that points to a file ("…instructions are in the file `<path>`…") is read from it, and
// claude's `--worktree <name>` creates .claude/worktrees/<name> on branch worktree-<name> as Claude
// Code does. Every call is appended as JSON to $FAKE_AGENT_LOG (set by the wrapper, not the task),
// with the uid and gid it ran as and who owns its directory, its parent and what is in them; a
// planning call also logs each checkout's HEAD and status as it found them.
import { execFileSync, spawn } from "node:child_process";
import { lookup } from "node:dns/promises";
import {
	appendFileSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [cli, ...argv] = process.argv.slice(2);

const SECRET_NAME = /(TOKEN|KEY|SECRET|PASSWORD|CREDENTIALS_(RELATIVE|FULL)_URI)$/;
const SECRET_VALUE = /(gh[pousr]_|github_pat_|sk-|lin_(api|wh|whs|oauth)_|lisa_|ATTA|AKIA|ASIA)/;

const uidOf = (pid) => {
	try {
		return Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1]);
	} catch {
		return null;
	}
};

/** The secret-looking variables in a process's initial environment; null when it is unreadable. */
function secretsOf(pid) {
	let environ;
	try {
		environ = readFileSync(`/proc/${pid}/environ`, "utf8");
	} catch {
		return null;
	}
	return environ
		.split("\0")
		.filter(Boolean)
		.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)])
		.filter(([name, value]) => SECRET_NAME.test(name) || SECRET_VALUE.test(value))
		.map(([name, value]) => ({ pid: Number(pid), uid: uidOf(pid), name, value }));
}

function scanProc() {
	const found = [];
	let readable = 0;
	let denied = 0;
	for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
		const secrets = secretsOf(pid);
		if (secrets === null) denied++;
		else {
			readable++;
			found.push(...secrets);
		}
	}
	return { found, readable, denied };
}

function ancestors() {
	const out = [];
	let pid = process.ppid;
	while (pid > 1 && out.length < 20) {
		const secrets = secretsOf(pid);
		out.push({ pid, uid: uidOf(pid), readable: secrets !== null, found: secrets ?? [] });
		try {
			const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
			pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
		} catch {
			break;
		}
	}
	return out;
}

if (cli === "--watch") {
	// The watcher left by leave-running: scans until it is killed (or for 5 minutes).
	const seen = new Set();
	const log = (entry) => appendFileSync(process.env.FAKE_AGENT_LOG, `${JSON.stringify(entry)}\n`);
	log({
		watcher: {
			pid: process.pid,
			uid: process.getuid(),
			cwd: process.cwd(),
			at: new Date().toISOString(),
		},
	});
	const until = Date.now() + 300_000;
	while (Date.now() < until) {
		const fresh = scanProc().found.filter((f) => !seen.has(`${f.pid}:${f.name}:${f.value}`));
		for (const f of fresh) seen.add(`${f.pid}:${f.name}:${f.value}`);
		if (fresh.length) log({ watcher: { pid: process.pid, found: fresh } });
		await new Promise((r) => setTimeout(r, 100));
	}
	process.exit(0);
}

/**
 * Each CLI's argv as its pinned release parses it (docs/agent-task.md › Providers and models): the
 * subcommand, the flags it accepts, with or without a value, and where the prompt is. Any other
 * flag is refused as the real CLI refuses it, so a change of Lisa's argv that the CLI would reject
 * fails here too.
 */
const ARGV = {
	claude: {
		flags: ["-p", "--dangerously-skip-permissions", "--verbose"],
		values: {
			"--model": "model",
			"--worktree": "worktree",
			"--output-format": null,
			"--settings": null,
		},
	},
	gemini: {
		flags: ["--yolo", "--skip-trust"],
		values: { "-m": "model", "--prompt": "prompt", "--output-format": null },
	},
	opencode: {
		verb: "run",
		flags: ["--pure"],
		values: { "-m": "model", "--format": null, "--title": null },
		// opencode joins its words with spaces.
		words: true,
	},
	codex: {
		verb: "exec",
		flags: [
			"--json",
			"--strict-config",
			"--dangerously-bypass-approvals-and-sandbox",
			"--ephemeral",
		],
		values: { "--model": "model", "--color": null },
	},
};

function parse() {
	if (argv[0] === "--version") return { version: true };
	const opts = { model: undefined, worktree: undefined, prompt: undefined };
	const spec = ARGV[cli];
	const args = [...argv];
	if (spec.verb && args.shift() !== spec.verb)
		fail(`usage: ${cli} ${spec.verb} [options] <prompt>`);
	const rest = [];
	for (let i = 0; i < args.length; i++) {
		const a = args[i];
		if (a === "--") {
			rest.push(...args.slice(i + 1));
			break;
		}
		if (spec.flags.includes(a)) continue;
		const eq = a.startsWith("--") ? a.indexOf("=") : -1;
		if (eq > 0 && a.slice(0, eq) in spec.values) {
			const key = spec.values[a.slice(0, eq)];
			if (key) opts[key] = a.slice(eq + 1);
			continue;
		}
		if (a in spec.values) {
			if (i + 1 >= args.length) fail(`error: a value is required for '${a}'`);
			const key = spec.values[a];
			if (key) opts[key] = args[++i];
			else i++;
			continue;
		}
		if (a.startsWith("-") && a !== "-") fail(`error: unexpected argument '${a}' found`);
		rest.push(a);
	}
	if (rest.length) opts.prompt = spec.words ? rest.join(" ") : rest.at(-1);
	// Without a prompt argument (codex: "-"), each real CLI reads it from stdin when that is no terminal.
	opts.stdin = (!opts.prompt || (cli === "codex" && opts.prompt === "-")) && !process.stdin.isTTY;
	if (!opts.prompt && !opts.stdin) fail(`${cli}: no prompt given`);
	return opts;
}

function fail(message, code = 2) {
	process.stderr.write(`${message}\n`);
	process.exit(code);
}

const git = (...args) => execFileSync("git", args, { encoding: "utf8" }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (entry) => {
	if (!process.env.FAKE_AGENT_LOG) return;
	mkdirSync(path.dirname(process.env.FAKE_AGENT_LOG), { recursive: true });
	appendFileSync(process.env.FAKE_AGENT_LOG, `${JSON.stringify(entry)}\n`);
};

const opts = parse();
if (opts.version) {
	log({ cli, version: { uid: process.getuid(), gid: process.getgid() } });
	console.log(`${cli} 0.0.0-fake`);
	process.exit(0);
}
// Read as a stream: a synchronous read of a pipe that is not ready yet fails with EAGAIN.
if (opts.stdin) {
	const chunks = [];
	for await (const chunk of process.stdin) chunks.push(chunk);
	opts.prompt = Buffer.concat(chunks).toString("utf8");
	if (!opts.prompt) fail(`${cli}: no prompt given`);
}

const pointer = opts.prompt.match(/instructions are in the file `([^`]+)`/);
const prompt = pointer ? readFileSync(pointer[1], "utf8") : opts.prompt;

const planFile = prompt.match(/write the plan file `([^`]+)`/)?.[1];
const researchFile = prompt.match(/write the epic research file `([^`]+)`/)?.[1];
const epicDir = prompt.match(/write the epic plan into `([^`]+)`/)?.[1];
const readsAll = planFile || researchFile || epicDir;
const target = researchFile
	? "research"
	: epicDir
		? "epic_plan"
		: planFile
			? "plan"
			: prompt.match(/ of the repository "([^"]+)"/)?.[1];
const directives = new Map();
/** Every `stdout=` line, in order (the other directives keep their last value). */
const printed = [];
for (const m of prompt.matchAll(
	/lisa-fake(?:\[([a-z,]+)\])?(?:@([A-Za-z0-9._-]+))?:\s*([a-z-]+)(?:=([^\n]*))?/g,
))
	if ((!m[1] || m[1].split(",").includes(cli)) && (!m[2] || m[2] === target)) {
		directives.set(m[3], (m[4] ?? "").trim());
		if (m[3] === "stdout") printed.push(directives.get("stdout"));
	}

const startCwd = process.cwd();
/** A planning call's checkouts as it found them: HEAD and status of each. */
function checkouts() {
	const out = {};
	for (const [, repo, dir] of prompt.matchAll(/^- `([^`]+)` — checked out at `([^`]+)`/gm))
		out[repo] = {
			head: execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim(),
			status: execFileSync("git", ["-C", dir, "status", "--porcelain"], { encoding: "utf8" }),
		};
	return out;
}
/** Who owns its directory, its parent, the clone and their entries (links, not their targets). */
function owners() {
	const out = {};
	const names = [".", ".."];
	for (const dir of [".", "..", "../repo", "repos"])
		try {
			for (const n of readdirSync(dir)) names.push(dir === "." ? n : `${dir}/${n}`);
		} catch {}
	for (const n of names)
		try {
			out[n] = lstatSync(n).uid;
		} catch {}
	return out;
}
log({
	cli,
	target: target ?? null,
	argv,
	model: opts.model,
	cwd: startCwd,
	pid: process.pid,
	prompt,
	promptFile: pointer?.[1] ?? null,
	promptOnStdin: opts.stdin === true,
	env: Object.keys(process.env).sort(),
	envValues: process.env,
	claudecode: process.env.CLAUDECODE ?? null,
	uid: process.getuid(),
	gid: process.getgid(),
	owners: owners(),
	...(readsAll ? { checkouts: checkouts() } : {}),
	at: new Date().toISOString(),
});

if (opts.worktree) {
	// Claude Code's --worktree: a worktree of the current repo, from HEAD, and work inside it.
	const dir = path.join(startCwd, ".claude", "worktrees", opts.worktree);
	git("worktree", "add", "-b", `worktree-${opts.worktree}`, dir, "HEAD");
	process.chdir(dir);
}

if (directives.has("hang")) {
	const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
		stdio: "ignore",
	});
	log({ cli, hang: { pid: process.pid, child: child.pid } });
	await new Promise(() => {});
}
if (directives.has("scan-secrets")) {
	const everywhere = directives.get("scan-secrets") !== "ancestors";
	log({
		cli,
		scan: { uid: process.getuid(), ...(everywhere ? scanProc() : {}), ancestors: ancestors() },
	});
}
if (directives.has("call-model")) {
	// Asks the Anthropic API it was given (Lisa's model broker) directly: a model, a path or a key of
	// its own choosing ({model, path?, key?}), and logs what came back.
	for (const call of JSON.parse(directives.get("call-model"))) {
		const route = call.path ?? "/v1/messages";
		const answer = await fetch(`${process.env.ANTHROPIC_BASE_URL}${route}`, {
			method: "POST",
			headers: {
				"content-type": "application/json",
				"anthropic-version": "2023-06-01",
				"x-api-key": call.key ?? process.env.ANTHROPIC_API_KEY ?? "",
			},
			body: JSON.stringify({
				model: call.model,
				max_tokens: 64,
				messages: [{ role: "user", content: "Say hi." }],
			}),
		}).then(
			async (r) => ({ status: r.status, body: (await r.text()).slice(0, 2000) }),
			(e) => ({ status: 0, body: String(e) }),
		);
		log({ cli, modelCall: { model: call.model, path: route, ...answer } });
	}
}
if (directives.has("reach")) {
	const within = (ms, p) =>
		Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error("timed out")), ms))]);
	const tcp = (to) =>
		new Promise((resolve, reject) => {
			const [host, port] = [
				to.slice(0, to.lastIndexOf(":")),
				Number(to.slice(to.lastIndexOf(":") + 1)),
			];
			const s = connect(port, host, () => {
				s.destroy();
				resolve("connected");
			});
			s.on("error", reject);
		});
	const viaProxy = (url) =>
		new Promise((resolve, reject) => {
			const target = new URL(url);
			const proxy = new URL(process.env.HTTPS_PROXY ?? "http://proxy.invalid");
			const tunnel = target.protocol === "https:";
			const port = target.port || (tunnel ? "443" : "80");
			const req = request({
				host: proxy.hostname,
				port: proxy.port,
				method: tunnel ? "CONNECT" : "GET",
				path: tunnel ? `${target.hostname}:${port}` : url,
			});
			req.on("connect", (res, socket) => {
				socket.destroy();
				resolve(`status ${res.statusCode}`);
			});
			req.on("response", async (res) => {
				let body = "";
				for await (const c of res) body += c;
				resolve(`status ${res.statusCode}: ${body.trim().slice(0, 300)}`);
			});
			req.on("error", reject);
			req.end();
		});
	const results = [];
	for (const way of JSON.parse(directives.get("reach"))) {
		const attempt = way.tcp
			? tcp(way.tcp)
			: way.dns
				? lookup(way.dns).then((a) => `resolved ${a.address}`)
				: viaProxy(way.proxy);
		results.push(
			await within(10_000, attempt).then(
				(outcome) => ({ ...way, ok: true, outcome }),
				(e) => ({ ...way, ok: false, outcome: e.code ?? e.message }),
			),
		);
	}
	log({ cli, reach: results });
}
if (directives.has("leave-running")) {
	const watcher = spawn(
		process.execPath,
		[fileURLToPath(import.meta.url), "--watch"],
		{ detached: true, stdio: "ignore", env: process.env }, // detached: setsid(), its own session
	);
	watcher.unref();
	log({ cli, left: { pid: watcher.pid } });
}
const seconds = Number(directives.get("sleep") ?? 0);
for (let i = 0; i < seconds; i++) {
	console.log(`working… ${i + 1}/${seconds}`);
	await sleep(1000);
}
if (directives.has("kill-self")) process.kill(process.pid, "SIGKILL");
for (const line of printed) console.log(line);
if (directives.has("print-env"))
	console.log(`${directives.get("print-env")}=${process.env[directives.get("print-env")] ?? ""}`);
if (directives.has("stderr")) process.stderr.write(`${directives.get("stderr")}\n`);
if (directives.has("exit")) process.exit(Number(directives.get("exit")));

const listedRepos = [...prompt.matchAll(/^- `([^`]+)` — checked out at `([^`]+)`/gm)];
if (readsAll && directives.has("plan-scribble"))
	for (const [, , dir] of listedRepos)
		writeFileSync(path.join(dir, "SCRIBBLE.md"), "planning notes\n");

/** An epic phase's directive for this attempt: `<name>-first`, `<name>-second`, else `<name>`. */
function forAttempt(name) {
	const attempt = prompt.startsWith("[FINAL ATTEMPT]")
		? 3
		: prompt.startsWith("[RETRY - MUST COMPLETE]")
			? 2
			: 1;
	const own = { 1: `${name}-first`, 2: `${name}-second` }[attempt];
	return own && directives.has(own) ? directives.get(own) : directives.get(name);
}

if (researchFile) {
	const given = forAttempt("research");
	const text = given
		? JSON.parse(given)
		: [
				"# Research",
				`## Overview\n\nThe issue touches ${listedRepos.map(([, r]) => r).join(", ")}.`,
				`## Relevant Files\n\n${listedRepos.map(([, r]) => `- ${r}/README.md`).join("\n")}`,
				"## Existing Patterns\n\nSmall modules with tests beside them.",
				"## Dependencies\n\nNone new.",
				"## Recommendations\n\nOne task per repository, in the listed order.",
			].join("\n\n");
	if (text !== null)
		writeFileSync(researchFile, text + "x".repeat(Number(directives.get("research-pad") ?? 0)));
	console.log(`researched: ${researchFile}`);
	process.exit(0);
}

if (epicDir) {
	const given = forAttempt("epic-plan");
	const files = given ? JSON.parse(given) : defaultEpicPlan(listedRepos.map(([, r]) => r));
	for (const [name, text] of Object.entries(files)) {
		const file = path.join(epicDir, name);
		mkdirSync(path.dirname(file), { recursive: true });
		writeFileSync(file, text);
	}
	for (const [name, to] of Object.entries(JSON.parse(directives.get("epic-link") || "{}"))) {
		mkdirSync(path.dirname(path.join(epicDir, name)), { recursive: true });
		rmSync(path.join(epicDir, name), { recursive: true, force: true });
		symlinkSync(to, path.join(epicDir, name));
	}
	console.log(`planned the epic: ${Object.keys(files).join(", ")}`);
	process.exit(0);
}

/** One task per repo, each depending on the one before. */
function defaultEpicPlan(repos) {
	const id = (i) => String(i + 1).padStart(2, "0");
	const files = {
		"plan.md": [
			"# Plan",
			"## Overview\n\nOne task per repository.",
			`## Tasks\n\n${repos.map((r, i) => `- ${id(i)}: Change ${r}`).join("\n")}`,
			`## Dependencies\n\n${repos.map((_, i) => `- ${id(i)}: [${i ? id(i - 1) : ""}]`).join("\n")}`,
		].join("\n\n"),
	};
	repos.forEach((r, i) => {
		files[`tasks/${id(i)}-change-${r.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.md`] = [
			`# Task ${i + 1}: Change ${r}`,
			`## Goal\n\nChange ${r} for the issue.`,
			`## Repository\n\n${r}`,
			"## Files\n\n- README.md",
			"## Steps\n\n1. Change it.",
			"## Done When\n\nThe tests pass.",
			`## Dependencies\n\n${i ? `- ${id(i - 1)}` : "None"}`,
		].join("\n\n");
	});
	return files;
}

if (planFile) {
	// Planning: read-only checkouts under repos/, one plan file, no commits.
	const repos = listedRepos;
	const retried = prompt.includes("[PLAN RETRY]");
	const plan =
		(!retried && directives.get("plan-first")) ||
		directives.get("plan") ||
		JSON.stringify({
			steps: repos.map(([, repo], i) => ({
				repo,
				scope: `Change ${repo} for the issue`,
				order: i + 1,
			})),
		});
	writeFileSync(planFile, plan);
	console.log(`planned: ${plan}`);
	process.exit(0);
}

const round = prompt.includes("You are continuing the work on pull request");
const title = (prompt.match(/```+untrusted-issue\n(?:[A-Z]+-\d+: )?([^\n]*)/) ?? [])[1] ?? "change";
const retry = /\[RETRY - MUST COMPLETE\]|\[FINAL ATTEMPT\]/.test(prompt);
const branch = git("rev-parse", "--abbrev-ref", "HEAD");
const commit = (message) => {
	git("add", "-A");
	if (!git("status", "--porcelain")) return;
	git("-c", "user.name=Fake Agent", "-c", "user.email=fake@example.com", "commit", "-m", message);
};
if (directives.has("empty-commit"))
	git(
		"-c",
		"user.name=Fake Agent",
		"-c",
		"user.email=fake@example.com",
		"commit",
		"--allow-empty",
		"-m",
		`feat: ${title.toLowerCase()}`,
	);
else if (!directives.has("no-commit")) {
	const file = directives.get("touch") || "LISA_CHANGE.md";
	mkdirSync(path.dirname(file), { recursive: true });
	if (round)
		appendFileSync(
			file,
			`\nFollow-up round by the fake ${cli} agent (${opts.model ?? "default model"}).\n`,
		);
	else
		writeFileSync(
			file,
			`# ${title}\n\nImplemented by the fake ${cli} agent (${opts.model ?? "default model"}).\n`,
		);
	if (directives.has("broken-until-retry"))
		writeFileSync("status.txt", retry ? "ok\n" : "broken\n");
	commit(
		retry
			? `fix: ${title.toLowerCase()} (retry)`
			: round
				? `fix: ${title.toLowerCase()} (follow-up)`
				: `feat: ${title.toLowerCase()}`,
	);
}
if (directives.has("run")) execFileSync("bash", [directives.get("run")], { stdio: "inherit" });

const manifestAt = prompt.match(/write the manifest file `([^`]+)`/)?.[1] ?? ".lisa-manifest.json";
const manifest = path.isAbsolute(manifestAt) ? manifestAt : path.join(process.cwd(), manifestAt);
if (directives.has("bad-manifest")) writeFileSync(manifest, "{ not json");
else if (directives.has("manifest")) writeFileSync(manifest, directives.get("manifest"));
else if (!directives.has("no-manifest") && round) {
	const ids = [...prompt.matchAll(/^- Review comment (\d+):$/gm)].map((m) => Number(m[1]));
	writeFileSync(
		manifest,
		JSON.stringify({
			branch,
			summary: "fake round",
			replies: ids.map((id) => ({ comment: id, body: `fake reply to ${id}` })),
		}),
	);
} else if (!directives.has("no-manifest"))
	writeFileSync(
		manifest,
		JSON.stringify({
			branch,
			prTitle: `feat: ${title.toLowerCase()}`,
			prBody: `* **What**: ${title}\n* **Why**: requested in the issue\n* **Testing**: fake agent`,
		}),
	);
console.log(
	`done: ${title}${existsSync("status.txt") ? ` (status ${readFileSync("status.txt", "utf8").trim()})` : ""}`,
);
