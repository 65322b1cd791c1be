// The real, pinned Claude Code run through Lisa's provider against a scripted Anthropic Messages API
// on 127.0.0.1: the argv, the environment allow-list, the reading of its stream-json output, as root
// and as the agent's own user.
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
	type AnthropicDouble,
	type AnthropicReply,
	startAnthropicDouble,
} from "../../../../test/doubles/models/anthropic";
import {
	type CliTest,
	expectImplemented,
	TEST_FINAL as FINAL,
	itImplements,
	TEST_MANIFEST as MANIFEST,
	modelEnv,
	withCli,
} from "../../../../test/support/agent-cli";
import { claudeReader } from "./claude";

const MODEL = "claude-sonnet-4-5";

/** What a model does for the issue: write the file, commit it, write the manifest, answer. */
const implementTurns = (repo: string): AnthropicReply[] => [
	{
		text: "I'll add the greeting.",
		tools: [
			{
				name: "Write",
				input: { file_path: path.join(repo, "greeting.txt"), content: "Hello, Lisa!\n" },
			},
		],
	},
	{
		tools: [
			{
				name: "Bash",
				input: {
					command: `git add greeting.txt && git commit -q -m '${MANIFEST.commitMessage}' && echo "uid=$(id -u) sandbox=\${IS_SANDBOX:-none}"`,
					description: "Commit the greeting",
				},
			},
		],
	},
	{
		tools: [
			{
				name: "Write",
				input: {
					file_path: path.join(repo, ".lisa-manifest.json"),
					content: JSON.stringify(MANIFEST),
				},
			},
		],
	},
	{ text: FINAL },
];

/** Runs claude as the task does, with a proxy that catches any request leaving loopback. */
const run = (t: CliTest<AnthropicDouble>, prompt: string, vars: NodeJS.ProcessEnv = {}) =>
	t.sandbox.run(
		"claude",
		prompt,
		{ ...modelEnv("claude", t.endpoint), ...vars },
		{ model: MODEL, proxy: t.trap.url },
	);

async function implementsTheIssue(t: CliTest<AnthropicDouble>) {
	const { sandbox, model: api, trap: proxy } = t;
	api.script(...implementTurns(sandbox.repo));
	const prompt = "--- Implement ENG-7: add a greeting file, commit it and write the manifest.";
	const r = await run(t, prompt);

	await expectImplemented(sandbox, r, "Hello, Lisa!\n");

	// The model saw the key, the prompt (a leading `-` and all), the model flag and every tool result.
	expect(api.turns).toHaveLength(4);
	expect(api.requests.every((q) => q.apiKey === api.apiKey && q.path === "/v1/messages")).toBe(
		true,
	);
	expect(api.turns.every((q) => q.model === MODEL && q.stream)).toBe(true);
	expect(JSON.stringify(api.turns[0]?.messages)).toContain(prompt);
	const results = api.turns
		.slice(1)
		.map((q) => q.messages.flatMap((m) => m.content).findLast((b) => b.type === "tool_result"));
	expect(results.map((b) => b !== undefined && b.is_error !== true)).toEqual([true, true, true]);
	// The CLI is told it runs in a sandbox only as root: the agent user keeps the root check.
	expect(JSON.stringify(results[1]?.content)).toContain(
		sandbox.user ? `uid=${sandbox.user.uid} sandbox=none` : "uid=0 sandbox=1",
	);

	// The report is what the server sent: four turns of the double's usage each.
	const u = api.usage;
	expect(r.report).toMatchObject({
		finalMessage: FINAL,
		turns: 4,
		servedModel: MODEL,
		usage: {
			inputTokens: 4 * u.input_tokens,
			outputTokens: 4 * u.output_tokens,
			cacheReadTokens: 4 * u.cache_read_input_tokens,
			cacheWriteTokens: 4 * u.cache_creation_input_tokens,
		},
	});
	expect(r.report?.usage?.costUsd).toBeGreaterThan(0);
	expect(r.report?.error).toBeUndefined();

	// Readable output: the messages and one line per tool call, never the raw events.
	expect(r.shown).toContain(FINAL);
	expect(r.shown).toContain("→ Bash git add greeting.txt");
	expect(r.shown).toContain("→ Write ");
	expect(r.shown).not.toContain('{"type"');
	expect(r.shown).not.toContain(api.apiKey);

	// Nothing but the model's endpoint was contacted.
	expect(proxy.seen).toEqual([]);
}

describe("claude (the real CLI against a scripted Anthropic API)", () => {
	itImplements(
		[
			"implements the issue as root: committed on Lisa's branch, manifest written, usage reported",
			"implements the issue as the agent's own user",
		],
		startAnthropicDouble,
		implementsTheIssue,
		undefined,
		{ cli: "claude", model: MODEL },
	);

	it.each([
		{ status: 429, kind: "rate_limit", transient: true },
		{ status: 529, kind: "overloaded", transient: true },
		{ status: 401, kind: "auth", transient: false },
	])(
		"an API error $status ends as $kind from the CLI's structured result",
		async ({ status, kind, transient }) => {
			await withCli(startAnthropicDouble, {}, async (t) => {
				t.model.script({ status }, { status }, { status });
				// One retry, so the test is quick; production keeps the CLI's own retries.
				const r = await run(t, "Add a greeting.", { CLAUDE_CODE_MAX_RETRIES: "1" });

				expect(r.ok).toBe(false);
				expect(r.report?.error?.kind, r.output).toBe(kind);
				expect(r.transient).toBe(transient);
				expect(t.model.turns).toHaveLength(2);
				expect(r.shown).toContain("claude failed: ");
				expect(r.shown).not.toContain('{"type"');
				expect(await t.sandbox.commits()).toEqual([]);
				expect(t.trap.seen).toEqual([]);
			});
		},
	);

	it("a server that cannot be reached is a network error", async () => {
		await withCli(startAnthropicDouble, {}, async (t) => {
			const r = await run(t, "Add a greeting.", {
				ANTHROPIC_BASE_URL: t.trap.url.replace(/:\d+$/, ":9"),
				CLAUDE_CODE_MAX_RETRIES: "0",
			});
			expect(r.ok).toBe(false);
			expect(r.report?.error?.kind).toBe("network");
			expect(r.transient).toBe(true);
		});
	});
});

/** An `assistant` event of 2.1.330's stream-json (trimmed): one per content block of a response. */
const assistant = (id: string, usage: Record<string, number>, parent: string | null = null) =>
	JSON.stringify({
		type: "assistant",
		message: {
			id,
			type: "message",
			role: "assistant",
			model: "claude-sonnet-4-5",
			content: [{ type: "text", text: `part of ${id}` }],
			usage,
		},
		parent_tool_use_id: parent,
		session_id: "s",
		uuid: `${id}-${Math.random()}`,
	});

const STARTED = { input_tokens: 1200, output_tokens: 1, cache_read_input_tokens: 2000 };
const streamed = (n: number) => ({
	inputTokens: n * 1200,
	outputTokens: n,
	cacheReadTokens: n * 2000,
	cacheWriteTokens: 0,
});

describe("claude output: the usage so far", () => {
	it("counts each response once, subagents' too, with the model the init event names", () => {
		const r = claudeReader();
		expect(r.usage?.()).toBeUndefined();
		r.line(JSON.stringify({ type: "system", subtype: "init", model: "claude-opus-4-5" }));
		// Two content blocks of one response repeat its usage: counted once.
		r.line(assistant("msg_1", STARTED));
		r.line(assistant("msg_1", STARTED));
		expect(r.usage?.()).toEqual({ usage: streamed(1), servedModel: "claude-opus-4-5" });
		r.line(assistant("msg_2", STARTED, "toolu_1"));
		r.line("not json at all");
		expect(r.usage?.()?.usage).toEqual(streamed(2));
		// Killed before its result: the report keeps what streamed.
		expect(r.report()).toEqual({
			finalMessage: "part of msg_1",
			usage: streamed(2),
			servedModel: "claude-opus-4-5",
		});
	});

	it("believes no result below what streamed, and takes its cost as reported", () => {
		const r = claudeReader();
		for (const id of ["msg_1", "msg_2", "msg_3"]) r.line(assistant(id, STARTED));
		// A result that claims one small request and a tiny cost.
		r.line(
			JSON.stringify({
				type: "result",
				subtype: "success",
				is_error: false,
				num_turns: 3,
				result: "done",
				total_cost_usd: 0.0001,
				modelUsage: {
					"claude-sonnet-4-5": {
						inputTokens: 10,
						outputTokens: 900,
						cacheReadInputTokens: 0,
						cacheCreationInputTokens: 0,
					},
				},
			}),
		);
		const usage = { ...streamed(3), outputTokens: 900, costUsd: 0.0001 };
		// Without an init event, the responses name the model.
		const servedModel = "claude-sonnet-4-5";
		expect(r.usage?.()).toEqual({ usage, servedModel, final: true });
		expect(r.report()).toMatchObject({ turns: 3, finalMessage: "done", usage });
		// Usage after the result (a forged one, then real responses) is watched again.
		r.line(assistant("msg_4", STARTED));
		expect(r.usage?.()).toEqual({
			usage: { ...usage, inputTokens: 4 * 1200, cacheReadTokens: 8000 },
			servedModel,
		});
	});

	it("keeps forged counts whole, positive and bounded", () => {
		const r = claudeReader();
		r.line(
			assistant("msg_1", { input_tokens: 1e300, output_tokens: -5, cache_read_input_tokens: 2.5 }),
		);
		expect(r.usage?.()?.usage).toEqual({
			inputTokens: 1e9,
			outputTokens: 0,
			cacheReadTokens: 2,
			cacheWriteTokens: 0,
		});
	});
});
