import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
	bashReply,
	type OpenAiChatDouble,
	startOpenAiChatDouble,
	textOf,
} from "../../../../test/doubles/models/openai-chat";
import { git } from "../../../../test/support/git";
import { commandEnv, type LiveUsage } from "../provider";
import { type BuiltinConfig, builtinConfig, CUT_REPLY_MESSAGE, runBuiltinAgent } from "./agent";
import { retryAfterMs } from "./llm";

let llm: OpenAiChatDouble;
let dir: string;
let repo: string;
let n = 0;
beforeAll(async () => {
	llm = await startOpenAiChatDouble();
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-builtin-"));
});
afterAll(async () => {
	await llm.stop();
	await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
	repo = path.join(dir, `repo-${++n}`);
	await git(dir, "init", "-q", "-b", "main", repo);
	await git(repo, "commit", "-q", "--allow-empty", "-m", "chore: init");
	llm.requests.length = 0;
});

const env = {
	...process.env,
	LISA_LLM_BASE_URL: "",
	LISA_LLM_API_KEY: "",
	LISA_LLM_MODEL: "test-model",
};
const config = (over: Partial<BuiltinConfig> = {}): BuiltinConfig => {
	const base = builtinConfig({
		LISA_LLM_BASE_URL: llm.url,
		LISA_LLM_API_KEY: llm.apiKey,
		LISA_LLM_MODEL: "test-model",
	});
	if (!base) throw new Error("no config");
	return { ...base, llm: { ...base.llm, retryDelaysMs: [0, 0] }, ...over };
};
const run = (cfg = config(), timeoutMs = 60_000) =>
	runBuiltinAgent("Add hello.txt saying hello, and commit it.", cfg, {
		cwd: repo,
		env: commandEnv({ ...env, GIT_AUTHOR_NAME: "Builtin" }),
		timeoutMs,
	});
const lastUser = (i: number) => textOf(llm.requests[i]?.messages.at(-1)?.content);

describe("the built-in agent against an OpenAI-compatible endpoint", () => {
	it("completes a small task in a git repo; format errors are fed back", async () => {
		llm.script(
			bashReply("See what is there.", "ls -a && git log --oneline"),
			"I will now create the file.", // no bash block: a format error, not fatal
			bashReply("Check my environment has no key.", "env | grep -c LISA_LLM || true"),
			bashReply(
				"Create and commit.",
				"cat <<'EOF' > hello.txt\nhello\nEOF\ngit add hello.txt && git commit -q -m 'feat: add hello'",
			),
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		const result = await run();
		expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false });
		expect(await git(repo, "log", "-1", "--format=%s %an")).toBe("feat: add hello Builtin");
		expect(await git(repo, "show", "HEAD:hello.txt")).toBe("hello");

		expect(llm.requests).toHaveLength(5);
		expect(llm.requests.every((r) => r.authorized && r.model === "test-model")).toBe(true);
		// No temperature unless LISA_LLM_TEMPERATURE sets one: reasoning models refuse any other.
		expect(llm.requests[0]?.temperature).toBeUndefined();
		expect(llm.requests[0]?.messages.map((m) => m.role)).toEqual(["system", "user"]);
		expect(llm.requests[0]?.messages[0]?.content).toMatch(/exactly ONE bash code block/);
		expect(lastUser(1)).toMatch(/<returncode>0<\/returncode>[\s\S]*chore: init/);
		// The malformed reply stays in the history, followed by the feedback.
		expect(llm.requests[2]?.messages.at(-2)).toEqual({
			role: "assistant",
			content: "I will now create the file.",
		});
		expect(lastUser(2)).toMatch(/^No bash command found/);
		expect(lastUser(3)).toMatch(/<output>\n0\n<\/output>/);
		expect(result.output).toContain("[step 3] $ env | grep -c LISA_LLM || true");
	});

	it("fails transiently on 429 after its retries, with the status in the output", async () => {
		llm.script({ status: 429 }, { status: 429 }, { status: 429 });
		const result = await run();
		expect(result).toMatchObject({ ok: false, transient: true });
		expect(result.output).toMatch(/HTTP 429 Too Many Requests: Rate limit reached/);
		expect(llm.requests).toHaveLength(3);
	});

	it("rides out one 5xx, and fails for good on 401", async () => {
		llm.script({ status: 502 }, bashReply("Done.", "echo TASK_COMPLETE"));
		expect(await run()).toMatchObject({ ok: true });
		const wrongKey = config();
		wrongKey.llm = { ...wrongKey.llm, apiKey: "sk-wrong-key-000000000000000000" };
		const result = await run(wrongKey);
		expect(result).toMatchObject({ ok: false, transient: false });
		expect(result.output).toMatch(/HTTP 401.*Incorrect API key/);
	});

	it("fails transiently when the endpoint is unreachable", async () => {
		const closed = await new Promise<number>((resolve) => {
			const srv = net.createServer().listen(0, "127.0.0.1", () => {
				const { port } = srv.address() as net.AddressInfo;
				srv.close(() => resolve(port));
			});
		});
		const cfg = config();
		cfg.llm = { ...cfg.llm, baseUrl: `http://127.0.0.1:${closed}/v1` };
		const result = await run(cfg);
		expect(result).toMatchObject({ ok: false, transient: true });
		expect(result.output).toMatch(/network error calling the LLM endpoint: ECONNREFUSED/);
	});

	it("stops at the step limit, times commands out and cuts long output", async () => {
		llm.script(
			bashReply("Wait.", "sleep 5"),
			bashReply("Print a lot.", "head -c 30000 /dev/zero | tr '\\0' x"),
			bashReply("Not the first line.", "echo hi; echo TASK_COMPLETE"),
		);
		const result = await run(config({ maxSteps: 3, commandTimeoutMs: 2000 }));
		expect(result).toMatchObject({ ok: false, transient: false });
		expect(result.output).toMatch(/step limit \(3\) reached/);
		expect(lastUser(1)).toMatch(/^The command timed out after 2 s and was killed/);
		expect(lastUser(2)).toContain("[... 20000 characters of output truncated ...]");
		expect(llm.requests).toHaveLength(3);
	});

	it("gives up after repeated format errors", async () => {
		llm.script("no", "still no", "nope");
		const result = await run(config({ maxFormatErrors: 3 }));
		expect(result).toMatchObject({ ok: false, transient: false });
		expect(result.output).toMatch(/3 replies in a row without exactly one bash block/);
	});

	it("is unavailable without an endpoint or a model", () => {
		expect(builtinConfig({ LISA_LLM_BASE_URL: llm.url })).toBeUndefined();
		expect(builtinConfig({ LISA_LLM_MODEL: "m" })).toBeUndefined();
		expect(builtinConfig({ LISA_LLM_BASE_URL: llm.url }, "from-spec")?.llm.model).toBe("from-spec");
	});

	it("reports its turns, the tokens the endpoint counted and its last reply", async () => {
		llm.script(
			{
				text: bashReply("Look.", "ls"),
				usage: { prompt_tokens: 1200, completion_tokens: 40, cached_tokens: 1000 },
			},
			{
				text: bashReply("Done.", "echo TASK_COMPLETE"),
				usage: { prompt_tokens: 1300, completion_tokens: 20 },
			},
		);
		const live: LiveUsage[] = [];
		const result = await runBuiltinAgent("Add hello.txt saying hello.", config(), {
			cwd: repo,
			env: commandEnv(env),
			timeoutMs: 60_000,
			onUsage: (u) => live.push(u),
		});
		expect(result.report).toEqual({
			finalMessage: bashReply("Done.", "echo TASK_COMPLETE"),
			turns: 2,
			// Cached input is counted once, as cache reads, not again as input.
			usage: { inputTokens: 1500, outputTokens: 60, cacheReadTokens: 1000, cacheWriteTokens: 0 },
			servedModel: "test-model",
		});
		// The usage so far after each response, for the budget's watch.
		expect(live).toEqual([
			{
				usage: { inputTokens: 200, outputTokens: 40, cacheReadTokens: 1000, cacheWriteTokens: 0 },
				servedModel: "test-model",
			},
			{ usage: result.report?.usage, servedModel: "test-model" },
		]);
	});

	it("runs no command of a response after which it was stopped", async () => {
		const stop = new AbortController();
		llm.script(bashReply("Write it.", "touch ran.txt"));
		const result = await runBuiltinAgent("Add hello.txt saying hello.", config(), {
			cwd: repo,
			env: commandEnv(env),
			timeoutMs: 60_000,
			signal: stop.signal,
			onUsage: () => stop.abort(),
		});
		expect(result).toMatchObject({ ok: false, report: { turns: 1 } });
		expect(result.output).toContain("builtin: stopped");
		expect(existsSync(path.join(repo, "ran.txt"))).toBe(false);
		expect(llm.requests).toHaveLength(1);
	});

	it("does not run a reply cut at the output limit, and asks for a shorter one", async () => {
		llm.script(
			{
				text: bashReply("Delete the cache.", "rm -rf cache && touch cut.txt"),
				finishReason: "length",
			},
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		const result = await run();
		expect(result).toMatchObject({ ok: true });
		expect(existsSync(path.join(repo, "cut.txt"))).toBe(false);
		expect(lastUser(1)).toBe(CUT_REPLY_MESSAGE);
		expect(result.output).toContain("cut off");
	});
});

describe("the built-in agent against a reasoning model and an endpoint's answers", () => {
	it("sends no temperature, so a reasoning model answers; a temperature set on purpose is sent", async () => {
		const reasoning = await startOpenAiChatDouble({ reasoning: true });
		try {
			const cfg = builtinConfig({
				LISA_LLM_BASE_URL: reasoning.url,
				LISA_LLM_API_KEY: reasoning.apiKey,
				LISA_LLM_MODEL: "o4-mini",
			});
			if (!cfg) throw new Error("no config");
			reasoning.script(bashReply("Done.", "echo TASK_COMPLETE"));
			expect(await run(cfg)).toMatchObject({ ok: true });

			const hot = builtinConfig({
				LISA_LLM_BASE_URL: reasoning.url,
				LISA_LLM_API_KEY: reasoning.apiKey,
				LISA_LLM_MODEL: "o4-mini",
				LISA_LLM_TEMPERATURE: "0",
			});
			if (!hot) throw new Error("no config");
			const refused = await run(hot);
			expect(refused).toMatchObject({ ok: false, transient: false });
			expect(refused.output).toMatch(
				/HTTP 400.*Unsupported value: 'temperature' does not support 0/,
			);
			expect(reasoning.requests.map((r) => r.temperature)).toEqual([undefined, 0]);
		} finally {
			await reasoning.stop();
		}
	});

	it("takes an unknown model as transient (the next model goes on) without asking again", async () => {
		llm.script({
			status: 404,
			code: "model_not_found",
			message: "The model `gpt-9` does not exist or you do not have access to it.",
		});
		const result = await run();
		expect(result).toMatchObject({ ok: false, transient: true });
		expect(result.output).toMatch(/HTTP 404.*The model `gpt-9` does not exist/);
		expect(llm.requests).toHaveLength(1);
	});

	it("waits as retry-after-ms says, and leaves a wait longer than is worth it to the next model", async () => {
		llm.script(
			{ status: 429, headers: { "retry-after-ms": "20" } },
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		expect(await run()).toMatchObject({ ok: true });
		expect(llm.requests).toHaveLength(2);

		llm.requests.length = 0;
		const later = new Date(Date.now() + 120_000).toUTCString();
		llm.script({ status: 429, headers: { "retry-after": later } });
		const result = await run();
		expect(result).toMatchObject({ ok: false, transient: true });
		expect(llm.requests).toHaveLength(1);
	});

	it("reads Retry-After in seconds or as an HTTP date, and retry-after-ms first", () => {
		const now = Date.parse("2026-11-24T10:00:00Z");
		const h = (o: Record<string, string>) => new Headers(o);
		expect(retryAfterMs(h({ "retry-after": "3" }), now)).toBe(3000);
		expect(retryAfterMs(h({ "retry-after": "Tue, 24 Nov 2026 10:00:07 GMT" }), now)).toBe(7000);
		expect(retryAfterMs(h({ "retry-after": "Tue, 24 Nov 2026 09:00:00 GMT" }), now)).toBe(0);
		expect(retryAfterMs(h({ "retry-after-ms": "250", "retry-after": "9" }), now)).toBe(250);
		expect(retryAfterMs(h({ "retry-after": "soon" }), now)).toBeUndefined();
		expect(retryAfterMs(h({}), now)).toBeUndefined();
	});
});
