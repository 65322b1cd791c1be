// The real pinned OpenCode CLI, run through Lisa's provider against a scripted local OpenAI-compatible
// chat endpoint: the argv, the settings `prepare` gives, the environment allow-list and the reading
// of `opencode run --format json` are the production ones.

import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startAnthropicDouble } from "../../../../test/doubles/models/anthropic";
import {
	type OpenAiChatDouble,
	startOpenAiChatDouble,
	textOf,
	toolResults,
} from "../../../../test/doubles/models/openai-chat";
import {
	type CliSandbox,
	type CliTest,
	expectImplemented,
	TEST_FINAL as FINAL,
	itImplements,
	TEST_MANIFEST as MANIFEST,
	type ModelEndpoint,
	modelEnv,
	withCli,
} from "../../../../test/support/agent-cli";
import { Broker } from "../../broker/broker";
import { brokerPlan, leasedEnv } from "../../broker/keys";
import { modelAllowed } from "../../broker/models";
import { MANIFEST_FILE } from "../../prompts/prompt";
import { MAX_PROMPT_STDIN_BYTES } from "../provider";
import { statusKind } from "./cli-provider";
import { opencodeReader } from "./opencode";

// Quotes, a flag-like word, double spaces and a new line: `run` must pass it on unchanged.
const PROMPT =
	'Implement ENG-7: add greeting.txt saying "hello",  commit it\nand write the manifest --force -m x.';
const MODEL = "lisa/test-coder-1";

/** Runs opencode against the double, with a proxy that catches any request leaving loopback. */
const run = (sandbox: CliSandbox, model: ModelEndpoint, prompt: string, trap: { url: string }) =>
	sandbox.run("opencode", prompt, modelEnv("opencode", model), { model: MODEL, proxy: trap.url });

const USAGE = [
	{ prompt_tokens: 1200, completion_tokens: 80, cached_tokens: 0 },
	{ prompt_tokens: 1500, completion_tokens: 40, cached_tokens: 1000 },
	{ prompt_tokens: 1700, completion_tokens: 60, cached_tokens: 1200 },
	{ prompt_tokens: 1900, completion_tokens: 20, cached_tokens: 1500 },
];

async function expectSuccess({ sandbox, model, trap, endpoint }: CliTest<OpenAiChatDouble>) {
	model.script(
		{
			text: "I'll add the file.",
			tools: [
				{
					name: "write",
					arguments: { filePath: path.join(sandbox.repo, "greeting.txt"), content: "hello\n" },
				},
			],
			usage: USAGE[0],
		},
		{
			tools: [
				{
					name: "bash",
					arguments: { command: "git add greeting.txt && git commit -q -m 'feat: add greeting'" },
				},
			],
			usage: USAGE[1],
		},
		{
			tools: [
				{
					name: "write",
					arguments: {
						filePath: path.join(sandbox.repo, MANIFEST_FILE),
						content: JSON.stringify(MANIFEST),
					},
				},
			],
			usage: USAGE[2],
		},
		{ text: FINAL, usage: USAGE[3] },
	);
	const r = await run(sandbox, endpoint, PROMPT, trap);

	await expectImplemented(sandbox, r, "hello\n");

	// Only the agent loop's requests (the title is given), each with the key; the prompt as
	// written; each tool's result back.
	expect(model.requests).toHaveLength(4);
	expect(model.requests.every((q) => q.authorized && q.stream && q.includeUsage)).toBe(true);
	expect(model.requests[0]?.model).toBe("test-coder-1");
	expect(model.requests[0]?.tools).toEqual(expect.arrayContaining(["bash", "write", "read"]));
	const user = (model.requests[0]?.messages ?? []).filter((m) => m.role === "user");
	expect(user.map((m) => textOf(m.content))).toEqual([PROMPT]);
	expect(model.turns.map((q) => toolResults(q).length)).toEqual([0, 1, 2, 3]);
	expect(trap.seen).toEqual([]);

	expect(r.report?.finalMessage).toBe(FINAL);
	expect(r.report?.turns).toBe(4);
	expect(r.report?.error).toBeUndefined();
	const sum = (k: keyof (typeof USAGE)[0]) => USAGE.reduce((n, u) => n + u[k], 0);
	expect(r.report?.usage).toEqual({
		inputTokens: sum("prompt_tokens") - sum("cached_tokens"),
		cacheReadTokens: sum("cached_tokens"),
		cacheWriteTokens: 0,
		outputTokens: sum("completion_tokens"),
	});
	expect(r.shown).toContain(FINAL);
	expect(r.shown).toContain("> bash: git add greeting.txt");
	expect(r.shown).not.toContain('"type":');
	expect(r.output).not.toContain(model.apiKey);
}

// A real event line of 1.18.33 (a 429 after its retries), trimmed of headers.
const RATE_LIMITED = JSON.stringify({
	type: "error",
	timestamp: 1,
	sessionID: "ses_1",
	error: {
		name: "APIError",
		data: {
			message: "Rate limit reached for requests. Please try again in 1s.",
			statusCode: 429,
			isRetryable: true,
			responseBody: JSON.stringify({
				error: {
					message: "Rate limit reached",
					type: "requests",
					param: null,
					code: "rate_limit_exceeded",
				},
			}),
		},
	},
});

describe("opencode output", () => {
	it("turns an error event into the report's error, whatever the exit code", () => {
		const reader = opencodeReader();
		expect(reader.line(RATE_LIMITED)).toBe(
			"error: Rate limit reached for requests. Please try again in 1s.",
		);
		expect(reader.report().error).toEqual({
			kind: "rate_limit",
			message: "Rate limit reached for requests. Please try again in 1s.",
		});
	});

	it("tells quota, auth and a missing model apart by status and code", () => {
		const kind = (statusCode: number, code: string | null) => {
			const reader = opencodeReader();
			const body = JSON.stringify({ error: { message: "m", type: "t", code } });
			const event = {
				type: "error",
				error: { name: "APIError", data: { message: "m", statusCode, responseBody: body } },
			};
			reader.line(JSON.stringify(event));
			return reader.report().error?.kind;
		};
		expect(kind(429, "insufficient_quota")).toBe("quota");
		expect(kind(401, "invalid_api_key")).toBe("auth");
		expect(kind(404, "model_not_found")).toBe("model_not_found");
		expect(kind(503, null)).toBe("overloaded");
		expect(kind(400, null)).toBe("invalid_request");
		// A status reads as statusKind reads it, so the chain tries the next model exactly when
		// isTransientStatus says the request is worth trying again.
		for (const status of [401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504, 529])
			expect(kind(status, null), `status ${status}`).toBe(statusKind(status));
	});

	it("adds each step's tokens to the usage so far, reasoning as output", () => {
		const reader = opencodeReader();
		const finished = (tokens: Record<string, unknown>, cost: number) =>
			JSON.stringify({ type: "step_finish", part: { type: "step-finish", tokens, cost } });
		expect(reader.usage?.()).toBeUndefined();
		reader.line(finished({ input: 1000, output: 50, reasoning: 200, cache: { read: 10 } }, 0));
		// A cost of 0 is a model OpenCode has no price for: unknown, not free.
		expect(reader.usage?.()).toEqual({
			usage: { inputTokens: 1000, outputTokens: 250, cacheReadTokens: 10, cacheWriteTokens: 0 },
		});
		reader.line(finished({ input: 500, output: 5, cache: { write: 7 } }, 0.25));
		expect(reader.usage?.()).toEqual({
			usage: {
				inputTokens: 1500,
				outputTokens: 255,
				cacheReadTokens: 10,
				cacheWriteTokens: 7,
				costUsd: 0.25,
			},
		});
	});

	it("shows text and one line per tool call, and hides the other events", () => {
		const reader = opencodeReader();
		const step = JSON.stringify({ type: "step_start", part: { type: "step-start" } });
		const tool = JSON.stringify({
			type: "tool_use",
			part: {
				tool: "bash",
				state: { status: "completed", input: { command: "git status\n  --short" } },
			},
		});
		expect(reader.line(step)).toBeUndefined();
		expect(reader.line(tool)).toBe("> bash: git status --short");
		expect(reader.line("not json")).toBe("not json");
	});
});

describe.concurrent("opencode (real CLI)", () => {
	itImplements(
		[
			"edits, commits and writes the manifest headless, and reports its turns and usage",
			"does the same as the agent user, in its own home",
		],
		startOpenAiChatDouble,
		expectSuccess,
		120_000,
		{ cli: "opencode", model: MODEL },
	);

	it("reads a prompt too long for stdin from the scratch directory, and nothing else outside", async () => {
		await withCli(startOpenAiChatDouble, {}, async ({ sandbox, model, trap }) => {
			const marker = "LISA-LONG-PROMPT-START";
			const prompt = `${marker}\n${"Keep every line of this prompt in mind.\n".repeat(6000)}`;
			expect(Buffer.byteLength(prompt)).toBeGreaterThan(MAX_PROMPT_STDIN_BYTES);
			const outside = path.join(path.dirname(sandbox.scratch), "outside.txt");
			await writeFile(outside, "not for the agent\n");
			// The model reads the file the pointer names, then one beside the scratch directory.
			model.script(
				(req) => {
					const file = /`([^`]+prompt-opencode-[^`]+)`/.exec(textOf(req.messages.at(-1)?.content));
					return { tools: [{ name: "read", arguments: { filePath: file?.[1] ?? "missing" } }] };
				},
				{ tools: [{ name: "read", arguments: { filePath: outside } }] },
				{ text: "Read it." },
			);
			const r = await run(sandbox, model, prompt, trap);
			expect(r.exitCode, r.output).toBe(0);
			expect(r.ok).toBe(true);
			expect(textOf(model.requests[0]?.messages.at(-1)?.content)).toContain(sandbox.scratch);
			const [read, denied] = model.turns[2] ? toolResults(model.turns[2]) : [];
			expect(read).toContain(marker);
			expect(read).toContain("Keep every line of this prompt in mind.");
			expect(denied).toMatch(/rule which prevents you/);
			expect(denied).not.toContain("not for the agent");
			expect(r.shown).toContain("> read:");
			expect(r.report?.finalMessage).toBe("Read it.");
			expect(trap.seen).toEqual([]);
		});
	}, 120_000);

	it("ends a rate-limited run in a transient error, not ok", async () => {
		await withCli(startOpenAiChatDouble, {}, async ({ sandbox, model, trap }) => {
			// OpenCode retries a 429 itself, five times, waiting as the headers say.
			model.script(
				...Array.from({ length: 8 }, () => ({ status: 429, headers: { "retry-after-ms": "10" } })),
			);
			const r = await run(sandbox, model, PROMPT, trap);
			expect(r.ok).toBe(false);
			expect(r.report?.error).toEqual({
				kind: "rate_limit",
				message: "Rate limit reached for test-coder-1. Please try again in 1s.",
			});
			expect(r.transient).toBe(true);
			expect(model.requests).toHaveLength(6);
			expect(await sandbox.commits()).toEqual([]);
			expect(r.shown).toContain("error: Rate limit reached");
			expect(r.shown).not.toContain('"type":');
			expect(trap.seen).toEqual([]);
		});
	}, 120_000);

	it("ends a refused key in an auth error, without retrying", async () => {
		await withCli(startOpenAiChatDouble, {}, async ({ sandbox, model, trap }) => {
			const r = await run(sandbox, { ...model, apiKey: "sk-wrong" }, PROMPT, trap);
			expect(r.ok).toBe(false);
			expect(r.report?.error?.kind).toBe("auth");
			expect(r.transient).toBe(false);
			expect(model.requests).toHaveLength(1);
			expect(model.requests[0]?.authorized).toBe(false);
		});
	}, 120_000);

	it("with an Anthropic key, reaches the model as its own anthropic provider, through Lisa's model broker", async () => {
		await withCli(startAnthropicDouble, {}, async ({ sandbox, model, trap }) => {
			const broker = await Broker.start();
			try {
				const configured = "anthropic/claude-sonnet-4-5";
				// The endpoint OpenCode's anthropic provider would use: the double's, here.
				const env = {
					ANTHROPIC_API_KEY: model.apiKey,
					OPENCODE_ANTHROPIC_BASE_URL: `${model.url}/v1`,
				};
				const plan = brokerPlan("opencode", env);
				const lease = broker.lease({
					upstreams: plan.routes.map((r) => r.upstream),
					allows: (m) => modelAllowed(configured, m),
				});
				model.script(
					{
						tools: [
							{
								name: "write",
								input: { filePath: path.join(sandbox.repo, "greeting.txt"), content: "hello\n" },
							},
						],
					},
					{
						tools: [
							{
								name: "bash",
								input: {
									command: "git add greeting.txt && git commit -q -m 'feat: add greeting'",
									description: "Commit",
								},
							},
						],
					},
					{
						tools: [
							{
								name: "write",
								input: {
									filePath: path.join(sandbox.repo, MANIFEST_FILE),
									content: JSON.stringify(MANIFEST),
								},
							},
						],
					},
					{ text: FINAL },
				);
				const r = await sandbox.run("opencode", PROMPT, leasedEnv(env, plan, lease), {
					model: configured,
					proxy: trap.url,
				});

				await expectImplemented(sandbox, r, "hello\n");
				expect(model.turns.map((q) => [q.model, q.apiKey])).toEqual(
					Array(4).fill(["claude-sonnet-4-5", model.apiKey]),
				);
				expect(lease.usage().usage).toEqual(model.billed);
				expect(trap.seen).toEqual([]);
			} finally {
				await broker.close();
			}
		});
	}, 120_000);
});
