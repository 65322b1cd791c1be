import { chown, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { oneLine } from "../../../domain/redact";
import type { AgentErrorKind, AgentReport, AgentRunOptions } from "../provider";
import { CliProvider, modelArgs, type OutputReader, statusKind } from "./cli-provider";
import { jsonLine, jsonObject, num, obj, str, tokens, toolSubject } from "./json";

/**
 * A custom OpenAI-compatible endpoint (docs/agent-task.md › Providers and models): with
 * OPENCODE_LISA_BASE_URL set, the model `lisa/<id>` is served from there with the key in
 * OPENCODE_LISA_API_KEY. Not OPENCODE_API_KEY: that one is OpenCode Zen's, and would send our key
 * to its models.
 */
const LISA_PROVIDER = "lisa";

/** OpenCode's own network extras, off: no models.dev refresh, no self-update, no LSP downloads. */
const QUIET_ENV = {
	OPENCODE_DISABLE_MODELS_FETCH: "1",
	OPENCODE_DISABLE_AUTOUPDATE: "1",
	OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
	OPENCODE_DISABLE_SHARE: "1",
};

/**
 * This run's settings, passed as OPENCODE_CONFIG_CONTENT: merged after the project's own
 * opencode.json, so a repository cannot turn approvals back on (`opencode run` rejects every
 * permission it would ask for, and still exits 0).
 */
function opencodeConfig(opts: AgentRunOptions): Record<string, unknown> {
	const baseURL = opts.env.OPENCODE_LISA_BASE_URL;
	const model = opts.model?.startsWith(`${LISA_PROVIDER}/`)
		? opts.model.slice(LISA_PROVIDER.length + 1)
		: undefined;
	return {
		$schema: "https://opencode.ai/config.json",
		autoupdate: false,
		share: "disabled",
		// Undo history for the TUI: a copy of the worktree's git state per step, never used here.
		snapshot: false,
		permission: {
			edit: "allow",
			bash: "allow",
			// Outside the worktree only the scratch directory, where a long prompt is (cli.ts).
			external_directory: { "*": "deny", [path.join(opts.scratchDir, "*")]: "allow" },
		},
		provider: {
			...(baseURL
				? {
						[LISA_PROVIDER]: {
							// Bundled in the binary: nothing is downloaded for it.
							npm: "@ai-sdk/openai-compatible",
							name: "Lisa",
							options: { baseURL, apiKey: `{env:OPENCODE_LISA_API_KEY}` },
							models: model ? { [model]: { name: model } } : {},
						},
					}
				: {}),
			// OpenCode's own providers, through Lisa's model broker (src/task/broker/keys.ts).
			...Object.fromEntries(
				Object.entries(BROKERED_PROVIDERS).flatMap(([name, variable]) =>
					opts.env[variable] ? [[name, { options: { baseURL: opts.env[variable] } }]] : [],
				),
			),
		},
	};
}

/** OpenCode's providers whose endpoint the broker's lease sets, by the variable it sets. */
const BROKERED_PROVIDERS: Record<string, string> = {
	anthropic: "OPENCODE_ANTHROPIC_BASE_URL",
	openai: "OPENCODE_OPENAI_BASE_URL",
	openrouter: "OPENCODE_OPENROUTER_BASE_URL",
};

/**
 * The config home for this run (XDG_CONFIG_HOME): OpenCode installs its plugin SDK from npm into
 * `<config home>/opencode` on every start unless a lockfile there already lists it; an empty
 * install marks it done, as this run loads no plugin (`--pure`). It is made anew (mkdtemp: root's
 * and closed until it is filled and handed over, children first), so nothing the agent left in
 * its home or the scratch directory can redirect what is written as root.
 */
async function configHome(opts: AgentRunOptions): Promise<string> {
	const home = await mkdtemp(path.join(opts.scratchDir, "opencode-config-"));
	const dir = path.join(home, "opencode");
	const modules = path.join(dir, "node_modules");
	const lock = path.join(dir, "package-lock.json");
	await mkdir(modules, { recursive: true });
	const content = { lockfileVersion: 3, packages: { "": { dependencies: PLUGIN_SDK } } };
	await writeFile(lock, JSON.stringify(content), { flag: "wx", mode: 0o600 });
	if (opts.user)
		for (const p of [modules, lock, dir, home]) await chown(p, opts.user.uid, opts.user.gid);
	return home;
}

const PLUGIN_SDK = { "@opencode-ai/plugin": "*" };

// `run` without a message argument reads the message from stdin (not a terminal).
export const opencode = new CliProvider({
	name: "opencode",
	bin: "opencode",
	help: ["run", "--help"],
	argv: (opts) => [
		"run",
		"--format",
		"json",
		"--pure",
		// A title given: no extra model request to make one up.
		"--title",
		"Lisa",
		...modelArgs(opts, "-m"),
	],
	reader: opencodeReader,
	async prepare(opts) {
		const home = await configHome(opts);
		// Settings the task already gives in OPENCODE_CONFIG_CONTENT, kept under ours.
		const own = jsonObject(opts.env.OPENCODE_CONFIG_CONTENT ?? "") ?? {};
		const ours = opencodeConfig(opts);
		return {
			...QUIET_ENV,
			XDG_CONFIG_HOME: home,
			OPENCODE_CONFIG_CONTENT: JSON.stringify({
				...own,
				...ours,
				provider: { ...(own.provider as object), ...(ours.provider as object) },
			}),
		};
	},
});

type Part = Record<string, unknown> & {
	text?: string;
	tool?: string;
	state?: { status?: string; input?: Record<string, unknown>; error?: string };
	tokens?: {
		input?: number;
		output?: number;
		reasoning?: number;
		cache?: { read?: number; write?: number };
	};
	cost?: number;
};

/** An error event's `error`: a named error whose `data` the API error fills in. */
interface RunError {
	name?: string;
	data?: { message?: string; statusCode?: number; isRetryable?: boolean; responseBody?: string };
}

/**
 * `opencode run --format json` prints one event a line, `{type, timestamp, sessionID, …}`:
 * `step_start` (a model request), `text` (a finished text part), `tool_use` (a finished or failed
 * tool call), `step_finish` (its tokens and cost), `error` (the session's error). Each
 * `step_finish` adds to the usage so far, which the budget watches as the run goes; no event names
 * the model that served it.
 */
export function opencodeReader(): OutputReader {
	const report: AgentReport = {};
	const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
	let cost = 0;
	let steps = 0;
	return {
		line(line) {
			const event = jsonLine(line);
			if (!event) return line;
			const part = (event.part ?? {}) as Part;
			switch (event.type) {
				case "step_start":
					steps++;
					return undefined;
				case "text":
					if (!part.text?.trim()) return undefined;
					report.finalMessage = part.text.trim();
					return report.finalMessage;
				case "tool_use":
					return toolLine(part);
				case "step_finish": {
					const t = part.tokens;
					usage.inputTokens += tokens(t?.input);
					// OpenCode counts reasoning apart from the output, and prices it as output.
					usage.outputTokens += tokens(t?.output) + tokens(t?.reasoning);
					usage.cacheReadTokens += tokens(t?.cache?.read);
					usage.cacheWriteTokens += tokens(t?.cache?.write);
					cost += Math.min(1e6, Math.max(0, num(part.cost)));
					// A model without a price (a custom endpoint's) costs 0 here: unknown, not free.
					report.usage = { ...usage, ...(cost > 0 ? { costUsd: cost } : {}) };
					return undefined;
				}
				case "error": {
					const error = (event.error ?? {}) as RunError;
					const message = error.data?.message ?? error.name ?? "unknown error";
					report.error = { kind: errorKind(error), message };
					return `error: ${message}`;
				}
				default:
					return undefined;
			}
		},
		usage: () => (report.usage ? { usage: report.usage } : undefined),
		report: () => ({ ...report, ...(steps > 0 ? { turns: steps } : {}) }),
	};
}

/** The arguments of a tool call that say what it works on, the first one given. */
const TOOL_SUBJECT = ["command", "path", "filePath", "pattern", "url", "description"];

/** One short line for a tool call: its name and what it acted on. */
function toolLine(part: Part): string {
	const input = part.state?.input ?? {};
	const what = toolSubject(input, TOOL_SUBJECT) ?? JSON.stringify(input);
	const failed = part.state?.status === "error" ? ` (failed: ${part.state.error ?? "error"})` : "";
	return oneLine(`> ${part.tool ?? "tool"}: ${what}${failed}`, 200);
}

/** The kind from the API error's status code and the body's structured code, never its text. */
function errorKind(error: RunError): AgentErrorKind {
	if (error.name === "ProviderAuthError") return "auth";
	if (error.name === "ContextOverflowError") return "invalid_request";
	if (error.name !== "APIError") return "other";
	const status = error.data?.statusCode;
	const code = bodyCode(error.data?.responseBody);
	if (code === "insufficient_quota") return "quota";
	if (code === "model_not_found") return "model_not_found";
	if (status === undefined) return error.data?.isRetryable ? "network" : "other";
	// The statuses as every agent CLI reads them (one transient-status rule).
	return statusKind(status) ?? "other";
}

/** `error.code` of an OpenAI-style error body, when the body is one. */
const bodyCode = (body: string | undefined): string | undefined =>
	str(obj(jsonObject(body ?? "")?.error).code);
