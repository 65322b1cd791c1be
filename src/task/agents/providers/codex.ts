import { chown, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { sumUsage } from "../../../domain/usage";
import type { AgentErrorKind, AgentReport, AgentRunOptions } from "../provider";
import { CliProvider, modelArgs, type OutputReader, statusKind } from "./cli-provider";
import { type Json, jsonLine, num, obj, str } from "./json";

const OPENAI_BASE_URL = "https://api.openai.com/v1";

/**
 * Codex reads its settings from `$CODEX_HOME/config.toml`: a fresh home per run keeps the user's
 * own Codex settings, logins and sessions out. The model is reached through a provider of our own
 * (the Responses API at OPENAI_BASE_URL, key from the environment, plain HTTP + SSE). A 429 is left
 * to Lisa's fallback chain (Codex never retries it); a 5xx or a dropped stream is retried a few
 * times, as Codex does by default, since a failure ends the run and its work is discarded before
 * the next model (`CODEX_LISA_RETRIES` sets how many). Everything that reaches other
 * hosts (plugin and app sync, analytics, update checks, waiting for the network forever) is off.
 */
/** Codex's own default is 4 for requests and 5 for streams. */
const retries = (env: NodeJS.ProcessEnv) =>
	/^\d{1,2}$/.test(env.CODEX_LISA_RETRIES ?? "") ? Number(env.CODEX_LISA_RETRIES) : 4;

function config(env: NodeJS.ProcessEnv): string {
	const keyVar = !env.OPENAI_API_KEY && env.CODEX_API_KEY ? "CODEX_API_KEY" : "OPENAI_API_KEY";
	const s = JSON.stringify;
	return [
		`model_provider = "lisa"`,
		"check_for_update_on_startup = false",
		`web_search = "disabled"`,
		"[analytics]",
		"enabled = false",
		"[features]",
		"plugins = false",
		"remote_plugin = false",
		"apps = false",
		"unbounded_connection_retries = false",
		"[model_providers.lisa]",
		// Not "OpenAI": Codex treats that name as its own login-based provider.
		`name = "OpenAI API"`,
		`base_url = ${s(env.OPENAI_BASE_URL || OPENAI_BASE_URL)}`,
		`env_key = ${s(keyVar)}`,
		`wire_api = "responses"`,
		"supports_websockets = false",
		`request_max_retries = ${retries(env)}`,
		`stream_max_retries = ${retries(env)}`,
		"",
	].join("\n");
}

async function prepare(opts: AgentRunOptions): Promise<NodeJS.ProcessEnv> {
	const home = await mkdtemp(path.join(opts.scratchDir, "codex-home-"));
	const file = path.join(home, "config.toml");
	await writeFile(file, config(opts.env), { mode: 0o600, flag: "wx" });
	// The file before its folder: once the folder is the agent's, its processes could put a link
	// where the file was, and chown follows links.
	if (opts.user) for (const p of [file, home]) await chown(p, opts.user.uid, opts.user.gid);
	return { CODEX_HOME: home };
}

/**
 * `codex exec --json` prints one event a line (thread.started, turn.started, item.started/updated/
 * completed, turn.completed with usage, turn.failed, error). Items are the agent's messages,
 * commands, file changes, tool calls and warnings. `exec` runs one turn, so its usage comes only
 * at the end and the budget checks it after the run; no event names the model.
 */
function codexReader(): OutputReader {
	const report: AgentReport = {};
	let failure: string | undefined;
	let lastError: string | undefined;
	let completed = false;
	return {
		line(line) {
			const ev = jsonLine(line);
			if (!ev) return line;
			switch (ev.type) {
				case "item.completed":
					return item(obj(ev.item), report);
				case "turn.completed": {
					completed = true;
					const u = obj(ev.usage);
					const cached = num(u.cached_input_tokens);
					const written = num(u.cache_write_input_tokens);
					report.usage = sumUsage([
						report.usage,
						{
							// Codex counts cached input inside input_tokens, as OpenAI does; Lisa counts it apart.
							inputTokens: Math.max(0, num(u.input_tokens) - cached - written),
							outputTokens: num(u.output_tokens),
							cacheReadTokens: cached,
							cacheWriteTokens: written,
						},
					]);
					return undefined;
				}
				case "turn.failed":
					failure = message(obj(ev.error).message);
					// Codex prints the error that ends a turn twice: as `error`, then `turn.failed`.
					return failure === lastError ? undefined : `error: ${failure}`;
				case "error":
					lastError = message(ev.message);
					return `error: ${lastError}`;
				default:
					return undefined;
			}
		},
		report() {
			// An `error` event alone may be a retry notice; it failed the run only if no turn completed.
			const msg = failure ?? (completed ? undefined : lastError);
			return msg ? { ...report, error: { kind: errorKind(msg), message: msg } } : report;
		},
	};
}

const message = (v: unknown): string => str(v) || "unknown error";

/** One line for a completed item; the agent's messages in full. */
function item(it: Json, report: AgentReport): string | undefined {
	switch (it.type) {
		case "agent_message":
			report.finalMessage = String(it.text ?? "");
			return report.finalMessage;
		case "command_execution":
			return `$ ${it.command} (${it.exit_code === null || it.exit_code === undefined ? it.status : `exit ${it.exit_code}`})`;
		case "file_change":
			return `edited ${((it.changes as { path: string; kind: string }[]) ?? []).map((c) => `${c.path} (${c.kind})`).join(", ")}`;
		case "mcp_tool_call":
			return `tool ${it.server}.${it.tool} (${it.status})`;
		case "web_search":
			return `search: ${it.query}`;
		case "error":
			return `warning: ${it.message}`;
		default:
			return undefined;
	}
}

/**
 * `codex exec --json` gives a failure as its message only; these are the fixed texts Codex writes
 * for each of its error kinds (an HTTP status it gave up on, a quota, an overloaded model, an
 * unexpected status with the API's own message, a dropped connection).
 */
function errorKind(msg: string): AgentErrorKind {
	const status = /^(?:exceeded retry limit, last status:|unexpected status) (\d{3})/.exec(msg)?.[1];
	if (/^Quota exceeded|usage limit|upgrade to Plus/i.test(msg)) return "quota";
	if (/^Selected model is at capacity|^We[’']re currently experiencing high demand/.test(msg))
		return "overloaded";
	if (/model_not_found|does not exist/.test(msg)) return "model_not_found";
	const kind = status ? statusKind(Number(status)) : undefined;
	if (kind) return kind;
	if (/^\{"error"/.test(msg)) return "invalid_request";
	if (
		/^(stream disconnected|Connection failed|Error while reading the server response|request timed out)/.test(
			msg,
		)
	)
		return "network";
	return "other";
}

/**
 * `codex exec` runs one turn headless. Lisa's container and the agent's own user are the sandbox, so
 * Codex's own (bubblewrap/landlock, which keeps `.git` read-only and needs user namespaces) is off
 * and it never asks for approval. `--strict-config` refuses a setting this version does not know
 * (rather than run with it ignored); `--ephemeral` keeps no session files.
 */
export const codex = new CliProvider({
	name: "codex",
	bin: "codex",
	help: ["exec", "--help"],
	argv: (opts) => [
		"exec",
		"--json",
		"--strict-config",
		"--dangerously-bypass-approvals-and-sandbox",
		"--ephemeral",
		"--color",
		"never",
		...modelArgs(opts, "--model"),
		// The prompt: "-" reads it from stdin.
		"-",
	],
	reader: codexReader,
	prepare,
});
