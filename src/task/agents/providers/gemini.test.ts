// The real pinned Gemini CLI, run through Lisa's provider against a scripted local Gemini API: the
// argv, the settings `prepare` writes, the environment allow-list and the reading of
// `--output-format stream-json` are the production ones.

import { describe, expect, it } from "vitest";
import {
	dailyQuotaExhausted,
	type GeminiDouble,
	type GeminiRequest,
	type GeminiUsage,
	startGeminiDouble,
} from "../../../../test/doubles/models/gemini-api";
import {
	type CliTest,
	expectImplemented,
	TEST_FINAL as FINAL,
	itImplements,
	TEST_MANIFEST as MANIFEST,
	modelEnv,
	withCli,
} from "../../../../test/support/agent-cli";
import { MANIFEST_FILE } from "../../prompts/prompt";
import { geminiReader } from "./gemini";

const MODEL = "gemini-2.5-pro";
// Starts with a dash: it must reach the CLI as the prompt, not as a flag.
const PROMPT =
	"- Implement ENG-7: add greeting.txt saying hello, commit it, and write the manifest.";
const USAGE: GeminiUsage[] = [
	{ promptTokenCount: 1000, candidatesTokenCount: 30 },
	{ promptTokenCount: 1200, candidatesTokenCount: 20, cachedContentTokenCount: 800 },
	{ promptTokenCount: 1400, candidatesTokenCount: 25, cachedContentTokenCount: 1000 },
	{ promptTokenCount: 1500, candidatesTokenCount: 15, cachedContentTokenCount: 1200 },
];

/** The function responses a request carried back to the model, by tool name. */
const toolResults = (req: GeminiRequest | undefined) =>
	new Map(
		(req?.contents ?? [])
			.flatMap((c) => c.parts)
			.flatMap((p) => (p.functionResponse ? [p.functionResponse] : []))
			.map((f) => [f.name, JSON.stringify(f.response)]),
	);

/** Runs the provider with the double's URL and key, and a proxy that catches anything else. */
const runGemini = ({ sandbox, trap, endpoint }: CliTest<GeminiDouble>) =>
	sandbox.run("gemini", PROMPT, modelEnv("gemini", endpoint), { model: MODEL, proxy: trap.url });

async function expectSuccess(t: CliTest<GeminiDouble>) {
	const { sandbox, model, trap } = t;
	model.script(
		{
			text: "I'll add the file.",
			calls: [{ name: "write_file", args: { file_path: "greeting.txt", content: "hello\n" } }],
			usage: USAGE[0],
		},
		{
			calls: [
				{
					name: "run_shell_command",
					args: { command: "git add greeting.txt && git commit -q -m 'feat: add greeting'" },
				},
			],
			usage: USAGE[1],
		},
		{
			calls: [
				{
					name: "write_file",
					args: { file_path: MANIFEST_FILE, content: JSON.stringify(MANIFEST) },
				},
			],
			usage: USAGE[2],
		},
		{ text: FINAL, usage: USAGE[3] },
	);
	const r = await runGemini(t);

	await expectImplemented(sandbox, r, "hello\n", `${r.output}\nproxied: ${trap.seen.join(", ")}`);

	// Four chat turns, each with the key; the prompt in the first, each tool's result in the next.
	const chats = model.chats();
	expect(model.requests).toEqual(chats);
	expect(chats).toHaveLength(4);
	expect(chats.every((q) => q.authorized && q.model === MODEL)).toBe(true);
	expect(chats[0]?.tools).toEqual(expect.arrayContaining(["write_file", "run_shell_command"]));
	expect(JSON.stringify(chats[0]?.contents)).toContain(JSON.stringify(PROMPT).slice(1, -1));
	expect(toolResults(chats[1]).get("write_file")).toContain("greeting.txt");
	expect(toolResults(chats[2]).get("run_shell_command")).toMatch(/Exit Code: 0|"output"/);
	expect(toolResults(chats[3]).get("write_file")).toContain(MANIFEST_FILE);
	expect(trap.seen).toEqual([]);

	expect(r.report?.finalMessage).toBe(FINAL);
	expect(r.report?.turns).toBe(4);
	expect(r.report?.error).toBeUndefined();
	// The result's stats name the model that served.
	expect(r.report?.servedModel).toBe(MODEL);
	const sum = (f: (u: GeminiUsage) => number) => USAGE.reduce((n, u) => n + f(u), 0);
	const cached = sum((u) => u.cachedContentTokenCount ?? 0);
	expect(r.report?.usage).toEqual({
		inputTokens: sum((u) => u.promptTokenCount) - cached,
		cacheReadTokens: cached,
		cacheWriteTokens: 0,
		outputTokens: sum((u) => u.candidatesTokenCount),
	});
	expect(r.shown).toContain(FINAL);
	expect(r.shown).toContain("→ write_file greeting.txt");
	expect(r.shown).toContain("→ run_shell_command git add greeting.txt");
	expect(r.shown).not.toContain('"type":');
	expect(r.output).not.toContain(model.apiKey);
}

describe("gemini provider (real CLI)", () => {
	itImplements(
		[
			"implements, commits and writes the manifest, headless in a new folder, reading only loopback",
			"does the same as the agent's own user",
		],
		startGeminiDouble,
		expectSuccess,
		120_000,
		{ cli: "gemini", model: MODEL },
	);

	it("reports a spent quota (429) as a rate limit after one request", async () => {
		await withCli(startGeminiDouble, {}, async (t) => {
			const { model, trap } = t;
			model.script({ error: dailyQuotaExhausted(MODEL) });
			const r = await runGemini(t);
			expect(r.ok).toBe(false);
			// The CLI exits with the HTTP status, modulo 256.
			expect(r.exitCode).toBe(429 % 256);
			expect(r.report?.error?.kind).toBe("rate_limit");
			expect(r.transient).toBe(true);
			expect(model.requests).toHaveLength(1);
			expect(r.shown).toContain("Error: [API Error: You have exhausted your daily quota");
			expect(r.shown).not.toContain('"type":');
			expect(trap.seen).toEqual([]);
		});
	}, 120_000);
});

describe("geminiReader", () => {
	const read = (lines: object[], exit?: { code: number | null }) => {
		const reader = geminiReader();
		const shown = lines.map((l) => reader.line(JSON.stringify(l))).filter(Boolean);
		return { shown, report: reader.report(exit) };
	};

	it("shows a turn's text whole, and keeps the last turn's as the final message", () => {
		const { shown, report } = read([
			{ type: "init", session_id: "s1", model: MODEL },
			{ type: "message", role: "user", content: "the prompt" },
			{ type: "message", role: "assistant", content: "Let me ", delta: true },
			{ type: "message", role: "assistant", content: "look.", delta: true },
			{ type: "tool_use", tool_name: "read_file", tool_id: "t1", parameters: { file_path: "a" } },
			{ type: "tool_result", tool_id: "t1", status: "error", error: { message: "no such file" } },
			{ type: "message", role: "assistant", content: "Done.", delta: true },
			{ type: "result", status: "success", stats: { input: 5, cached: 2, output_tokens: 3 } },
		]);
		expect(shown).toEqual([
			`gemini: session s1, model ${MODEL}`,
			"Let me look.\n→ read_file a",
			"✗ read_file: no such file",
			"Done.",
		]);
		expect(report).toEqual({
			finalMessage: "Done.",
			turns: 2,
			usage: { inputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 0, outputTokens: 3 },
		});
	});

	it("names the model that served when the stats have one, and none when several did", () => {
		const stats = (models: string[]) => ({
			input: 5,
			models: Object.fromEntries(models.map((m) => [m, { input_tokens: 5 }])),
		});
		const served = (models: string[]) =>
			read([{ type: "result", status: "success", stats: stats(models) }]).report.servedModel;
		expect(served(["gemini-2.5-flash"])).toBe("gemini-2.5-flash");
		expect(served(["gemini-2.5-flash", "gemini-2.5-pro"])).toBeUndefined();
	});

	it.each([
		{ code: 429 % 256, kind: "rate_limit" },
		{ code: 503 % 256, kind: "overloaded" },
		{ code: 404 % 256, kind: "model_not_found" },
		{ code: 1, kind: "other" },
	])("reads an API failure that exits $code as $kind", ({ code, kind }) => {
		const { report } = read(
			[{ type: "result", status: "error", error: { type: "unknown", message: "[API Error: x]" } }],
			{ code },
		);
		expect(report.error).toEqual({ kind, message: "[API Error: x]" });
	});

	it("reads the CLI's own authentication failure, which ends without a result", () => {
		expect(read([], { code: 41 }).report.error?.kind).toBe("auth");
	});
});
