#!/usr/bin/env node
// A fake agent CLI (claude, gemini, opencode, codex) honouring the real argv contract. It behaves
// like an agent that did the work: edits a file, commits, writes .lisa-manifest.json. Directives in
// the prompt (lines "lisa-fake: <directive>", e.g. in the issue description) change its behaviour:
//   exit=N · stderr=<text> · stdout=<text> · sleep=N (seconds, printing a line per second)
//   hang (no output, never exits) · no-commit · no-manifest · bad-manifest · touch=<path>
// Every call is appended as JSON to $FAKE_AGENT_LOG (set by the wrapper script, not the task).
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const [cli, ...argv] = process.argv.slice(2);

function parse() {
	if (argv[0] === "--version") return { version: true };
	const opts = { model: undefined, worktree: false, prompt: undefined };
	const args = [...argv];
	if (cli === "claude") {
		for (let i = 0; i < args.length; i++) {
			const a = args[i];
			if (a === "-p" || a === "--dangerously-skip-permissions") continue;
			if (a === "--model") opts.model = args[++i];
			else if (a === "--worktree") opts.worktree = true;
			else opts.prompt = a;
		}
	} else if (cli === "gemini") {
		for (let i = 0; i < args.length; i++) {
			const a = args[i];
			if (a === "--yolo") continue;
			if (a === "-m") opts.model = args[++i];
			else if (a === "-p") opts.prompt = args[++i];
		}
	} else if (cli === "opencode" || cli === "codex") {
		const verb = cli === "opencode" ? "run" : "exec";
		if (args.shift() !== verb) fail(`usage: ${cli} ${verb} [-m model] <prompt>`);
		for (let i = 0; i < args.length; i++) {
			const a = args[i];
			if (a === "--full-auto") continue;
			if (a === "-m") opts.model = args[++i];
			else opts.prompt = a;
		}
	}
	if (!opts.prompt) fail(`${cli}: no prompt given`);
	return opts;
}

function fail(message, code = 2) {
	process.stderr.write(`${message}\n`);
	process.exit(code);
}

const git = (...args) => execFileSync("git", args, { encoding: "utf8" }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const opts = parse();
if (opts.version) {
	console.log(`${cli} 0.0.0-fake`);
	process.exit(0);
}

const directives = new Map();
for (const m of opts.prompt.matchAll(/lisa-fake:\s*([a-z-]+)(?:=([^\n]*))?/g))
	directives.set(m[1], (m[2] ?? "").trim());

if (process.env.FAKE_AGENT_LOG) {
	mkdirSync(path.dirname(process.env.FAKE_AGENT_LOG), { recursive: true });
	appendFileSync(
		process.env.FAKE_AGENT_LOG,
		`${JSON.stringify({ cli, argv, model: opts.model, cwd: process.cwd(), env: Object.keys(process.env).sort(), claudecode: process.env.CLAUDECODE ?? null, at: new Date().toISOString() })}\n`,
	);
}

if (directives.has("hang")) await new Promise(() => {});
const seconds = Number(directives.get("sleep") ?? 0);
for (let i = 0; i < seconds; i++) {
	console.log(`working… ${i + 1}/${seconds}`);
	await sleep(1000);
}
if (directives.has("stdout")) console.log(directives.get("stdout"));
if (directives.has("stderr")) process.stderr.write(`${directives.get("stderr")}\n`);
if (directives.has("exit")) process.exit(Number(directives.get("exit")));

const title =
	(opts.prompt.match(/```+untrusted-issue\n(?:[A-Z]+-\d+: )?([^\n]*)/) ?? [])[1] ?? "change";
const branch = git("rev-parse", "--abbrev-ref", "HEAD");
if (!directives.has("no-commit")) {
	const file = directives.get("touch") || "LISA_CHANGE.md";
	mkdirSync(path.dirname(file), { recursive: true });
	writeFileSync(
		file,
		`# ${title}\n\nImplemented by the fake ${cli} agent (${opts.model ?? "default model"}).\n`,
	);
	git("add", "-A");
	git(
		"-c",
		"user.name=Fake Agent",
		"-c",
		"user.email=fake@example.com",
		"commit",
		"-m",
		`feat: ${title.toLowerCase()}`,
	);
}
if (directives.has("bad-manifest")) writeFileSync(".lisa-manifest.json", "{ not json");
else if (!directives.has("no-manifest"))
	writeFileSync(
		".lisa-manifest.json",
		JSON.stringify({
			branch,
			prTitle: `feat: ${title.toLowerCase()}`,
			prBody: `* **What**: ${title}\n* **Why**: requested in the issue\n* **Testing**: fake agent`,
		}),
	);
console.log(`done: ${title}`);
