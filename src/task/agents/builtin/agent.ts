import { tail } from "../../../domain/redact";
import { sumUsage } from "../../../domain/usage";
import type { AgentUser } from "../../sandbox/process";
import { runProcess } from "../../sandbox/process";
import type { AgentResult, AgentUsage, LiveUsage } from "../provider";
import { type ChatMessage, type ChatReply, chat, type LlmConfig, LlmError } from "./llm";
import {
	COMPLETE_MARKER,
	isCompletion,
	observation,
	parseAction,
	SYSTEM_PROMPT,
	taskMessage,
} from "./protocol";

// Lisa's built-in agent (after the original Lisa CLI's and mini-swe-agent v1's): a bash-only loop against an OpenAI-compatible
// endpoint, for teams without an agent CLI. Each command runs in a fresh `bash -c` in the worktree.

export interface BuiltinConfig {
	llm: Omit<LlmConfig, "signal">;
	maxSteps: number;
	commandTimeoutMs: number;
	/** Consecutive replies without exactly one bash block before the run gives up. */
	maxFormatErrors: number;
}

const positive = (v: string | undefined, fallback: number) => {
	const n = Number(v);
	return Number.isFinite(n) && n > 0 ? n : fallback;
};

const optionalNumber = (v: string | undefined) =>
	v?.trim() && Number.isFinite(Number(v)) ? Number(v) : undefined;

/** The agent's settings from `LISA_LLM_*`; undefined when no endpoint or model is set. */
export function builtinConfig(
	env: NodeJS.ProcessEnv,
	model = env.LISA_LLM_MODEL,
): BuiltinConfig | undefined {
	const baseUrl = env.LISA_LLM_BASE_URL;
	if (!baseUrl || !model) return undefined;
	return {
		llm: {
			baseUrl,
			apiKey: env.LISA_LLM_API_KEY,
			model,
			temperature: optionalNumber(env.LISA_LLM_TEMPERATURE),
			timeoutMs: positive(env.LISA_LLM_REQUEST_TIMEOUT_SECONDS, 300) * 1000,
			retryDelaysMs: [1000, 3000],
		},
		maxSteps: positive(env.LISA_LLM_MAX_STEPS, 60),
		commandTimeoutMs: positive(env.LISA_LLM_COMMAND_TIMEOUT_SECONDS, 120) * 1000,
		maxFormatErrors: 5,
	};
}

export interface BuiltinIo {
	cwd: string;
	/** The environment of the commands the agent runs (no LLM key). */
	env: NodeJS.ProcessEnv;
	timeoutMs: number;
	onOutput?: (chunk: string) => void;
	signal?: AbortSignal;
	/** The user the commands run as (the agent's own, when the task has one). */
	user?: AgentUser;
	/** The usage so far, after every response that reported one (the budget's live watch). */
	onUsage?: (live: LiveUsage) => void;
}

const MAX_TRANSCRIPT = 64 * 1024;

/** What a reply cut at the output limit is answered with: it is not run, half a command is worse. */
export const CUT_REPLY_MESSAGE =
	"Your reply was cut off at the output token limit, so nothing was run. Reply again, shorter: a brief THOUGHT and exactly ONE bash code block.";

export async function runBuiltinAgent(
	task: string,
	cfg: BuiltinConfig,
	io: BuiltinIo,
): Promise<AgentResult> {
	const deadline = AbortSignal.timeout(io.timeoutMs);
	const signal = AbortSignal.any([deadline, ...(io.signal ? [io.signal] : [])]);
	let transcript = "";
	const emit = (text: string) => {
		transcript = tail(transcript + text, MAX_TRANSCRIPT);
		io.onOutput?.(text);
	};
	let usage: AgentUsage | undefined;
	let turns = 0;
	let lastReply: string | undefined;
	const end = (ok: boolean, line: string, transient?: boolean): AgentResult => {
		emit(`${line}\n`);
		return {
			ok,
			output: transcript,
			exitCode: ok ? 0 : 1,
			timedOut: deadline.aborted,
			transient: ok ? undefined : transient,
			report: { finalMessage: lastReply, turns, usage, servedModel: cfg.llm.model },
		};
	};

	const messages: ChatMessage[] = [
		{ role: "system", content: SYSTEM_PROMPT },
		{ role: "user", content: taskMessage(task) },
	];
	let formatErrors = 0;
	for (let step = 1; step <= cfg.maxSteps; step++) {
		if (signal.aborted) return end(false, "builtin: stopped", false);
		let answer: ChatReply;
		try {
			answer = await chat({ ...cfg.llm, signal }, messages);
		} catch (err) {
			if (signal.aborted) return end(false, "builtin: stopped", false);
			const e = err instanceof LlmError ? err : new LlmError(String(err), false);
			return end(false, `builtin: the LLM request failed: ${e.message}`, e.transient);
		}
		turns++;
		if (answer.usage) {
			usage = sumUsage([usage, answer.usage]);
			io.onUsage?.({ usage, servedModel: cfg.llm.model });
			// Stopped for what this response cost: its command does not run.
			if (signal.aborted) return end(false, "builtin: stopped", false);
		}
		const reply = answer.content;
		lastReply = reply;
		// The reply is kept even when it is malformed, so the model sees what it said (unlike the original Lisa CLI).
		messages.push({ role: "assistant", content: reply });
		const action = answer.cut ? { formatError: CUT_REPLY_MESSAGE } : parseAction(reply);
		if ("formatError" in action) {
			emit(`[step ${step}] ${answer.cut ? "cut off" : "format error"}: ${action.formatError}\n`);
			if (++formatErrors >= cfg.maxFormatErrors)
				return end(
					false,
					`builtin: ${formatErrors} replies in a row without exactly one bash block`,
					false,
				);
			messages.push({ role: "user", content: action.formatError });
			continue;
		}
		formatErrors = 0;
		emit(`[step ${step}] $ ${action.command}\n`);
		// Commands run as the agent's user, as an agent CLI's do: as root, a uid and a network namespace
		// of its own (docs/security.md › Security). Their text is not screened: a blocklist of command text is
		// bypassed by writing a script, so the uid is the boundary.
		const r = await runProcess("bash", ["-c", action.command], {
			cwd: io.cwd,
			env: io.env,
			timeoutMs: cfg.commandTimeoutMs,
			signal,
			onOutput: emit,
			user: io.user,
		});
		if (signal.aborted) return end(false, "builtin: stopped", false);
		if (isCompletion(r.stdout, r.code))
			return end(true, `builtin: ${step} steps, task complete`, undefined);
		messages.push({
			role: "user",
			content: observation({
				output: r.error ? `${r.error}\n${r.output}` : r.output,
				exitCode: r.code,
				timedOut: r.timedOut,
				timeoutSeconds: cfg.commandTimeoutMs / 1000,
			}),
		});
	}
	return end(
		false,
		`builtin: step limit (${cfg.maxSteps}) reached without ${COMPLETE_MARKER}`,
		false,
	);
}
