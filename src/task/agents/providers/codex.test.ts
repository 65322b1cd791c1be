// The real pinned Codex CLI, run through Lisa's provider against a scripted local Responses API:
// the argv, the settings `prepare` writes, the environment allow-list and the reading of
// `codex exec --json` are the production ones.

import { describe, expect, it } from "vitest";
import {
	applyPatch,
	DEFAULT_USAGE,
	type ResponsesDouble,
	type ResponsesRequest,
	type ResponsesTurn,
	shell,
	startResponsesDouble,
	toolOutputs,
	userTexts,
} from "../../../../test/doubles/models/openai-responses";
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

const PROMPT = "Implement ENG-7: add greeting.txt saying hello, commit it, and write the manifest.";

/** The model's side of a successful run: a file, a commit, the manifest, then its answer. */
function successTurns(): ResponsesTurn[] {
	const manifest = JSON.stringify(MANIFEST).replaceAll("'", "'\\''");
	return [
		{
			text: "I'll add the file.",
			calls: [applyPatch("*** Begin Patch\n*** Add File: greeting.txt\n+hello\n*** End Patch\n")],
		},
		{ calls: [shell("git add greeting.txt && git commit -q -m 'feat: add greeting'")] },
		{
			calls: [shell(`printf '%s' '${manifest}' > ${MANIFEST_FILE}`)],
			usage: { input: 2000, cached: 1500, output: 25 },
		},
		{ text: FINAL, usage: { input: 2100, cached: 1800, output: 15 } },
	];
}

async function expectSuccess({ sandbox, model, trap, endpoint }: CliTest<ResponsesDouble>) {
	const turns = successTurns();
	model.script(...turns);
	const r = await sandbox.run("codex", PROMPT, modelEnv("codex", endpoint), {
		model: "gpt-5.5",
		proxy: trap.url,
	});

	await expectImplemented(sandbox, r, "hello\n");

	// Every model call came with the key, the prompt and, after the first, the command's result.
	expect(model.requests).toHaveLength(4);
	expect(model.requests.every((q) => q.authorized && q.stream)).toBe(true);
	const [first, second, third] = model.requests as [ResponsesRequest, ...ResponsesRequest[]];
	expect(first.model).toBe("gpt-5.5");
	expect(first.tools).toEqual(expect.arrayContaining(["exec_command", "apply_patch"]));
	expect(userTexts(first)).toContain(PROMPT);
	expect(second && toolOutputs(second).get("call_double1_0")).toMatch(/Success|greeting\.txt/);
	expect(third && toolOutputs(third).get("call_double2_0")).toMatch(/exited with code 0/);
	expect(model.unexpected).toEqual([]);
	expect(trap.seen).toEqual([]);

	expect(r.report?.finalMessage).toBe(FINAL);
	// `codex exec --json` does not say how many requests a turn took.
	expect(r.report?.turns).toBeUndefined();
	expect(r.report?.error).toBeUndefined();
	const sent = turns.map((t) => ("usage" in t && t.usage) || DEFAULT_USAGE);
	const sum = (k: "input" | "cached" | "output") => sent.reduce((n, u) => n + u[k], 0);
	expect(r.report?.usage).toEqual({
		inputTokens: sum("input") - sum("cached"),
		cacheReadTokens: sum("cached"),
		cacheWriteTokens: 0,
		outputTokens: sum("output"),
	});
	expect(r.shown).toContain("I'll add the file.");
	expect(r.shown).toContain(FINAL);
	expect(r.shown).toContain("$ ");
	expect(r.shown).toContain("git commit");
	expect(r.shown).toMatch(/^edited .*greeting\.txt \(add\)$/m);
	expect(r.shown).not.toContain('"type":');
	expect(r.output).not.toContain(model.apiKey);
}

describe("codex provider (real CLI)", () => {
	itImplements(
		[
			"implements, commits and writes the manifest, headless, reading only loopback",
			"does the same as the agent's own user",
		],
		startResponsesDouble,
		expectSuccess,
		60_000,
		{ cli: "codex", model: "gpt-5.5" },
	);

	it.each([
		{ name: "a 429 rate limit", turn: { status: 429 }, kind: "rate_limit", transient: true },
		{
			name: "an overloaded model (503)",
			turn: {
				status: 503,
				code: "server_is_overloaded",
				message: "The engine is currently overloaded.",
			},
			kind: "overloaded",
			transient: true,
		},
		{ name: "a server error (500)", turn: { status: 500 }, kind: "overloaded", transient: true },
		{
			name: "an exhausted quota",
			turn: { failed: { code: "insufficient_quota", message: "You exceeded your current quota." } },
			kind: "quota",
			transient: true,
		},
		{
			name: "an unknown model",
			turn: {
				status: 400,
				code: "model_not_found",
				message: "The requested model 'gpt-5.5' does not exist.",
			},
			kind: "model_not_found",
			transient: true,
		},
		{ name: "a refused API key (401)", key: "sk-wrong", kind: "auth", transient: false },
		// Nothing listens on port 1: Codex must fail at once, not wait for the network.
		{
			name: "an unreachable endpoint",
			url: "http://127.0.0.1:1/v1",
			kind: "network",
			transient: true,
		},
	] as const)(
		"reports $name as $kind and gives up at once",
		async (c) => {
			await withCli(startResponsesDouble, {}, async ({ sandbox, model }) => {
				if ("turn" in c && c.turn) model.script(c.turn);
				const endpoint = {
					apiKey: "key" in c && c.key ? c.key : model.apiKey,
					url: "url" in c && c.url ? c.url : model.url,
				};
				const r = await sandbox.run(
					"codex",
					PROMPT,
					// No retries of a 5xx or a lost stream here, to see the failure itself.
					{ ...modelEnv("codex", endpoint), CODEX_LISA_RETRIES: "0" },
					{ model: "gpt-5.5" },
				);
				expect(r.ok).toBe(false);
				expect(r.exitCode).not.toBe(0);
				expect(r.report?.error?.kind).toBe(c.kind);
				expect(r.transient).toBe(c.transient);
				// One request (none when nothing listens).
				expect(model.requests).toHaveLength("url" in c ? 0 : 1);
				// Shown once, though Codex prints it as `error` and again as `turn.failed`.
				expect(r.shown.split("\n").filter((l) => l.startsWith("error: "))).toEqual([
					`error: ${r.report?.error?.message}`,
				]);
			});
		},
		60_000,
	);

	it("rides out a 5xx by default, as Codex does: the run goes on", async () => {
		await withCli(startResponsesDouble, {}, async ({ sandbox, model }) => {
			model.script(
				{
					status: 503,
					code: "server_is_overloaded",
					message: "The engine is currently overloaded.",
				},
				{ text: FINAL },
			);
			const r = await sandbox.run("codex", PROMPT, modelEnv("codex", model), { model: "gpt-5.5" });
			expect(r.ok, r.output).toBe(true);
			expect(r.report?.finalMessage).toBe(FINAL);
			expect(model.requests).toHaveLength(2);
		});
	}, 60_000);
});
