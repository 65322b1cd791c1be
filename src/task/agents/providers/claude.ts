import { usd } from "../../../domain/cost";
import { oneLine } from "../../../domain/redact";
import { sumUsage } from "../../../domain/usage";
import type { AgentErrorKind, AgentReport, AgentUsage } from "../provider";
import { CliProvider, modelArgs, type OutputReader, statusKind } from "./cli-provider";
import { type Json, jsonLine, num, obj, str, tokens, toolSubject } from "./json";

/** Claude Code's typed cause of an API error (`api_error` on the result), when it has one. */
const CAUSES: Record<string, AgentErrorKind> = {
	connection_failed: "network",
	no_response: "network",
	stream_idle_timeout: "network",
	network_edge_blocked: "network",
	tls_untrusted_ca: "network",
	tls_cert_signature_failure: "network",
	usage_limit_reached: "quota",
	model_requires_usage_credits: "quota",
	long_context_credits_required: "quota",
	provider_credentials: "auth",
	api_key_auth_disabled: "auth",
	org_disabled_credential: "auth",
	invalid_credential_header: "auth",
	message_over_context_limit: "invalid_request",
};

/** The API's own error type (`api_error_type`, Anthropic's `error.type`). */
const API_TYPES: Record<string, AgentErrorKind> = {
	rate_limit_error: "rate_limit",
	overloaded_error: "overloaded",
	// A failure inside the provider: worth the next model, like an overloaded one.
	api_error: "overloaded",
	billing_error: "quota",
	authentication_error: "auth",
	permission_error: "auth",
	not_found_error: "model_not_found",
	invalid_request_error: "invalid_request",
	request_too_large: "invalid_request",
};

/** The error kind of the CLI's last API-error message (`error`), for what the two above miss. */
const MESSAGE_ERRORS: Record<string, AgentErrorKind> = {
	billing_error: "quota",
	rate_limit: "rate_limit",
	overloaded: "overloaded",
	server_error: "overloaded",
	model_not_found: "model_not_found",
	authentication_failed: "auth",
	oauth_org_not_allowed: "auth",
	account_on_hold: "auth",
	cloud_credential_error: "auth",
	invalid_request: "invalid_request",
};

/** The arguments of a tool call that say what it works on, the first one given. */
const TOOL_SUBJECT = ["command", "file_path", "path", "pattern", "url", "description"];

/** One tool call in a line: the tool and what it works on. */
const toolLine = (name: string, input: Json): string =>
	`→ ${name} ${oneLine(toolSubject(input, TOOL_SUBJECT) ?? JSON.stringify(input))}`;

/** An Anthropic API `usage` object (a response's, or the `result`'s main loop) as tokens. */
const apiUsage = (u: Json): AgentUsage => ({
	inputTokens: tokens(u.input_tokens),
	outputTokens: tokens(u.output_tokens),
	cacheReadTokens: tokens(u.cache_read_input_tokens),
	cacheWriteTokens: tokens(u.cache_creation_input_tokens),
});

/** Per token kind, the larger of two counts. */
const most = (a: AgentUsage, b: AgentUsage): AgentUsage => ({
	inputTokens: Math.max(a.inputTokens, b.inputTokens),
	outputTokens: Math.max(a.outputTokens, b.outputTokens),
	cacheReadTokens: Math.max(a.cacheReadTokens, b.cacheReadTokens),
	cacheWriteTokens: Math.max(a.cacheWriteTokens, b.cacheWriteTokens),
});

/**
 * Reads `--output-format stream-json --verbose`: one JSON event a line — `system` (`init` with the
 * model, `api_retry`), `assistant` (text and tool_use blocks, each with its API response's usage),
 * `user` (tool results) and a last `result` with the turns, the usage of every model the run
 * called, the cost and, on failure, the API's typed error.
 *
 * The usage so far is each response's once (one `assistant` event per content block repeats its
 * response's usage). Printed as a response starts, it counts its output only as far as the API had
 * by then: a lower bound until the `result` gives the whole. The `result` counts every request (the
 * CLI's side requests too), so a `result` with fewer tokens than were streamed is not believed: each
 * kind counts the larger.
 */
export function claudeReader(): OutputReader {
	let result: Json | undefined;
	let lastText: string | undefined;
	let lastApiError: Json | undefined;
	let servedModel: string | undefined;
	const responses = new Map<string, AgentUsage>();
	// The last usage change was the `result`.
	let final = false;

	const streamed = () => sumUsage([...responses.values()]);
	const count = (message: Json, e: Json) => {
		const u = obj(message.usage);
		if (!Object.keys(u).length) return;
		const id = str(message.id) ?? str(e.uuid) ?? `event-${responses.size}`;
		const now = apiUsage(u);
		const before = responses.get(id);
		responses.set(id, before ? most(before, now) : now);
		servedModel ??= str(message.model);
		final = false;
	};
	/** The run's usage: the `result`'s (not below what was streamed), else what was streamed. */
	const usage = (): AgentUsage | undefined => {
		if (!result) return responses.size ? streamed() : undefined;
		const models = Object.values(obj(result.modelUsage)).map(obj);
		// `usage` counts the main loop only; `modelUsage` every model the run called.
		const reported = models.length
			? sumUsage(
					models.map((m) => ({
						inputTokens: tokens(m.inputTokens),
						outputTokens: tokens(m.outputTokens),
						cacheReadTokens: tokens(m.cacheReadInputTokens),
						cacheWriteTokens: tokens(m.cacheCreationInputTokens),
					})),
				)
			: apiUsage(obj(result.usage));
		const cost = result.total_cost_usd;
		return {
			...most(reported, streamed()),
			...(typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? { costUsd: cost } : {}),
		};
	};
	return {
		line(raw) {
			const e = jsonLine(raw);
			if (!e) return raw;
			const message = obj(e.message);
			const content = Array.isArray(message.content) ? (message.content as Json[]) : [];
			switch (e.type) {
				case "system":
					if (e.subtype === "init") {
						servedModel = str(e.model) ?? servedModel;
						return `claude ${str(e.claude_code_version) ?? ""} · ${str(e.model) ?? "default model"} · ${str(e.cwd) ?? ""}`;
					}
					if (e.subtype === "api_retry")
						return `API error ${e.error_status ?? str(e.error) ?? ""}: retry ${num(e.attempt)}/${num(e.max_retries)} in ${num(e.retry_delay_ms)} ms`;
					return undefined;
				case "assistant": {
					// The CLI's own message standing for a failed request: the result says it again.
					if (e.is_api_error_message === true) {
						lastApiError = e;
						return undefined;
					}
					// A subagent's responses cost as much as the main loop's.
					count(message, e);
					if (e.parent_tool_use_id) return undefined;
					const shown: string[] = [];
					for (const block of content) {
						if (block.type === "text" && str(block.text)?.trim()) {
							lastText = str(block.text);
							shown.push(lastText as string);
						}
						if (block.type === "tool_use")
							shown.push(toolLine(str(block.name) ?? "tool", obj(block.input)));
					}
					return shown.length ? shown.join("\n") : undefined;
				}
				case "user": {
					if (e.parent_tool_use_id) return undefined;
					const failed = content.find((b) => b.type === "tool_result" && b.is_error === true);
					if (!failed) return undefined;
					const text =
						str(failed.content) ??
						(Array.isArray(failed.content)
							? failed.content.map((b) => str(obj(b).text) ?? "").join(" ")
							: "");
					return `← tool error: ${oneLine(text, 160)}`;
				}
				case "result":
					result = e;
					final = true;
					return e.is_error === true
						? `claude failed: ${oneLine(str(e.result) ?? str(e.subtype) ?? "error", 160)}`
						: `claude finished: ${num(e.num_turns)} turns, ${usd(num(e.total_cost_usd))}`;
				default:
					return undefined;
			}
		},
		usage() {
			const u = usage();
			return (
				u && { usage: u, ...(servedModel ? { servedModel } : {}), ...(final ? { final } : {}) }
			);
		},
		report() {
			const u = usage();
			const seen = { ...(u ? { usage: u } : {}), ...(servedModel ? { servedModel } : {}) };
			if (!result) return { ...(lastText ? { finalMessage: lastText } : {}), ...seen };
			const report: AgentReport = { turns: num(result.num_turns), ...seen };
			const text = str(result.result);
			if (result.is_error !== true) {
				report.finalMessage = text ?? lastText;
				return report;
			}
			const kind =
				CAUSES[str(result.api_error) ?? ""] ??
				API_TYPES[str(result.api_error_type) ?? ""] ??
				MESSAGE_ERRORS[str(lastApiError?.error) ?? ""] ??
				statusKind(num(result.api_error_status)) ??
				"other";
			report.error = { kind, message: text || str(result.subtype) || "claude reported an error" };
			return report;
		},
	};
}

/**
 * Claude Code in print mode (docs/agent-task.md › Providers and models): `-p` runs one prompt
 * without a terminal and skips the workspace trust dialog; `--dangerously-skip-permissions` lets it
 * edit files and run commands without asking (nobody could answer); `stream-json` (which needs
 * `--verbose` in print mode) is its machine-readable output. `--worktree` takes an optional name:
 * it is always given one. The prompt is read from stdin, as print mode does without a prompt argument.
 */
export const claude = new CliProvider({
	name: "claude",
	bin: "claude",
	help: ["--help"],
	argv: (opts) => [
		"-p",
		"--dangerously-skip-permissions",
		"--output-format",
		"stream-json",
		"--verbose",
		...modelArgs(opts, "--model"),
		...(opts.nativeWorktree
			? // From the base Lisa checked out, not from a fresh fetch of the remote's default branch
				// (`worktree.baseRef` "fresh", the default): the base may be another branch, and the
				// agent has no token to fetch with.
				[
					"--settings",
					JSON.stringify({ worktree: { baseRef: "head" } }),
					"--worktree",
					opts.nativeWorktree,
				]
			: []),
	],
	reader: claudeReader,
	prepare: async (opts) => ({
		// Telemetry, error reports, update checks and feature-flag fetches off: the model's endpoint
		// is the only host the CLI itself contacts.
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
		// Skipping permissions as root is refused unless IS_SANDBOX=1 says the CLI runs in a sandbox.
		// Lisa runs agents as an agent user whenever it has one, and the check stays on for it. Without
		// one, as root (`LISA_AGENT_UIDS=off`, docs/security.md › Security), the operator already gave
		// the agent the task's privileges: an allow-list in `acceptEdits` mode instead would hand it
		// the same root shell through `Bash` and deny, with nobody to ask, whatever no rule foresaw.
		...(!opts.user && process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
	}),
	nativeWorktree: true,
});
