import { chown, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { oneLine } from "../../../domain/redact";
import type { AgentErrorKind, AgentRunOptions, AgentUsage } from "../provider";
import { CliProvider, modelArgs, type OutputReader, statusKind } from "./cli-provider";
import { jsonLine, obj, toolSubject } from "./json";

/** The argument of a tool call worth a line: the file, the command, the pattern. */
const TOOL_SUBJECT = ["file_path", "dir_path", "command", "pattern", "url", "query", "path"];

/** Errors the CLI names by their class (its fatal startup and run errors). */
const ERROR_TYPES: Record<string, AgentErrorKind> = {
	FatalAuthenticationError: "auth",
	FatalInputError: "invalid_request",
	FatalConfigError: "invalid_request",
};

/**
 * The exit code of a run that reported an error. An API failure ends the CLI with the HTTP status
 * as its exit code (so 429 exits 173, mod 256); its own failures have their documented codes.
 */
const EXIT_CODES: Record<number, AgentErrorKind | undefined> = {
	41: "auth",
	42: "invalid_request",
	...Object.fromEntries(
		[400, 401, 403, 404, 429, 500, 502, 503, 504].map((s) => [s % 256, statusKind(s)]),
	),
};

/**
 * Reads `--output-format stream-json`: one event a line (init, message, tool_use, tool_result,
 * error, result). Assistant text comes in deltas and is shown whole, when the turn moves on. Only
 * the `result` has usage, keyed by model (the one that served, when one did): the budget checks it
 * after the run.
 */
export function geminiReader(): OutputReader {
	const tools = new Map<string, string>();
	let text = "";
	let lastText: string | undefined;
	let inTurn = false;
	let turns = 0;
	let usage: AgentUsage | undefined;
	let servedModel: string | undefined;
	let failure: { type: string; message: string } | undefined;

	const startTurn = () => {
		if (inTurn) return;
		inTurn = true;
		turns++;
	};
	/** The text held so far, shown before what comes next. */
	const flush = (next?: string) => {
		const said = text.trim();
		text = "";
		if (said) lastText = said;
		const out = [said, next].filter(Boolean).join("\n");
		return out || undefined;
	};

	return {
		line(line) {
			const e = jsonLine(line);
			if (!e) return line;
			switch (e.type) {
				case "init":
					return flush(`gemini: session ${e.session_id}, model ${e.model}`);
				case "message":
					if (e.role !== "assistant") return undefined; // the prompt itself
					startTurn();
					text += String(e.content ?? "");
					return undefined;
				case "tool_use": {
					startTurn();
					const name = String(e.tool_name);
					tools.set(String(e.tool_id), name);
					const args = (e.parameters ?? {}) as Record<string, unknown>;
					const what = toolSubject(args, TOOL_SUBJECT);
					return flush(`→ ${name}${what !== undefined ? ` ${oneLine(what)}` : ""}`);
				}
				case "tool_result": {
					inTurn = false;
					if (e.status !== "error") return flush();
					const err = (e.error ?? {}) as { message?: string };
					const name = tools.get(String(e.tool_id)) ?? "tool";
					return flush(`✗ ${name}: ${oneLine(String(err.message ?? "failed"), 300)}`);
				}
				case "error":
					return flush(`[${e.severity ?? "error"}] ${e.message}`);
				case "result": {
					const s = e.stats as Record<string, number> | undefined;
					const models = Object.keys(obj(obj(s).models));
					if (models.length === 1) servedModel = models[0];
					if (s) {
						const cached = s.cached ?? 0;
						usage = {
							inputTokens: s.input ?? (s.input_tokens ?? 0) - cached,
							outputTokens: s.output_tokens ?? 0,
							cacheReadTokens: cached,
							cacheWriteTokens: 0,
						};
					}
					if (e.status !== "error") return flush();
					const err = (e.error ?? {}) as { type?: string; message?: string };
					failure = { type: String(err.type ?? "unknown"), message: String(err.message ?? "") };
					return flush(`Error: ${failure.message}`);
				}
				default:
					return line;
			}
		},
		report(exit?: { code: number | null }) {
			flush();
			const code = exit?.code ?? 0;
			const fatal = code === 41 || code === 42;
			const error =
				failure || fatal
					? {
							kind:
								ERROR_TYPES[failure?.type ?? ""] ??
								(code ? EXIT_CODES[code] : undefined) ??
								"other",
							message: failure?.message || `gemini exited with code ${code}`,
						}
					: undefined;
			return {
				...(lastText !== undefined ? { finalMessage: lastText } : {}),
				...(turns ? { turns } : {}),
				...(usage ? { usage } : {}),
				...(servedModel ? { servedModel } : {}),
				...(error ? { error } : {}),
			};
		},
	};
}

/**
 * Gemini CLI's user settings for a headless run. They go in a home of its own (`GEMINI_CLI_HOME`)
 * in the run's scratch directory, with its history and state: no one's `~/.gemini` is read or
 * touched. (Its system settings file would rank higher, but it must sit in directories only root
 * can write, all the way up.)
 */
function settings(env: NodeJS.ProcessEnv): Record<string, unknown> {
	// With a key and no other auth chosen, say so: left to its own detection, a base URL in the
	// environment selects the "gateway" auth, which headless mode refuses.
	const apiKey =
		env.GEMINI_API_KEY &&
		env.GOOGLE_GENAI_USE_VERTEXAI !== "true" &&
		env.GOOGLE_GENAI_USE_GCA !== "true";
	return {
		...(apiKey ? { security: { auth: { selectedType: "gemini-api-key" } } } : {}),
		general: {
			enableAutoUpdate: false,
			enableAutoUpdateNotification: false,
			// Each attempt after the first waits 5 s or more (backoff); past one retry, a rate-limited
			// model is better left for Lisa's next one.
			maxAttempts: 2,
		},
		// Nothing but the model is reached: no usage statistics, telemetry or IDE companion.
		privacy: { usageStatisticsEnabled: false },
		telemetry: { enabled: false },
		ide: { enabled: false },
		// Headless, the terminal's colours do not matter.
		ui: { showCompatibilityWarnings: false },
	};
}

async function prepare(opts: AgentRunOptions): Promise<NodeJS.ProcessEnv> {
	// Made anew (mkdtemp: root's, closed, until it is filled and handed over, children first), so
	// nothing the agent left in the scratch directory can redirect what is written as root.
	const home = await mkdtemp(path.join(opts.scratchDir, "gemini-home-"));
	const dir = path.join(home, ".gemini");
	// On an API error the CLI writes the whole conversation to a file in the temporary directory:
	// this run's own, not one other agents' users can read.
	const tmp = path.join(home, "tmp");
	await mkdir(dir, { mode: 0o700 });
	await mkdir(tmp, { mode: 0o700 });
	const file = path.join(dir, "settings.json");
	await writeFile(file, JSON.stringify(settings(opts.env), null, 2), { mode: 0o600, flag: "wx" });
	if (opts.user)
		for (const p of [file, tmp, dir, home]) await chown(p, opts.user.uid, opts.user.gid);
	return { GEMINI_CLI_HOME: home, TMPDIR: tmp };
}

// `--skip-trust` trusts the worktree for this run only: Lisa's worktree is new to the CLI, and in
// an untrusted folder it drops `--yolo` back to asking, which headless means refusing every edit.
// With stdin not a terminal it runs headless and reads the prompt from stdin.
export const gemini = new CliProvider({
	name: "gemini",
	bin: "gemini",
	argv: (opts) => [
		"--skip-trust",
		"--yolo",
		"--output-format",
		"stream-json",
		...modelArgs(opts, "-m"),
	],
	reader: geminiReader,
	prepare,
	help: ["--help"],
});
