import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
	type AnthropicDouble,
	type AnthropicReply,
	startAnthropicDouble,
} from "../../../test/doubles/models/anthropic";
import {
	bashReply,
	type OpenAiChatDouble,
	startOpenAiChatDouble,
} from "../../../test/doubles/models/openai-chat";
import { AGENT_CLI_BIN } from "../../../test/support/agent-cli";
import { branches } from "../../../test/support/git";
import { createTaskWorld, type TaskWorld } from "../../../test/support/task";
import { ANTHROPIC_KEY } from "../../../test/support/world";
import type { StepBudget } from "../../domain/run";

// The run's budget as the task watches it (docs/cost.md › Cost and budgets), through the real task
// code: the real, pinned agent CLIs (or the fake ones) against scripted model servers, a step
// launched with a budget as the pipeline launches it.

let w: TaskWorld;
let anthropic: AnthropicDouble;
let chat: OpenAiChatDouble;
beforeAll(async () => {
	w = await createTaskWorld();
	anthropic = await startAnthropicDouble({ apiKey: ANTHROPIC_KEY });
});
afterAll(async () => {
	await anthropic?.stop();
	await w?.stop();
});
// A chat endpoint of its own for each test: nothing left in one script reaches the next.
beforeEach(async () => {
	anthropic.reset();
	chat = await startOpenAiChatDouble();
});
afterEach(() => chat.stop());

/** A run whose step was launched with `budget`, as the pipeline launches it. */
async function budgeted(
	issue: { title: string; description?: string },
	config: string,
	budget: StepBudget,
): Promise<string> {
	const runId = await w.newRun(issue, config);
	const run = await w.run(runId);
	await w.store.updateRun(run, { steps: { 0: { budget } } }, new Date().toISOString());
	return runId;
}

/** The pinned CLIs first on PATH, the model APIs the doubles. */
const realClis = () => ({
	PATH: `${AGENT_CLI_BIN}:${w.env.PATH}`,
	ANTHROPIC_BASE_URL: anthropic.url,
	OPENCODE_LISA_BASE_URL: chat.url,
	OPENCODE_LISA_API_KEY: chat.apiKey,
	LISA_LLM_BASE_URL: chat.url,
	LISA_LLM_API_KEY: chat.apiKey,
});

/** A model turn that runs a command through Claude Code's Bash tool. */
const bash = (command: string): AnthropicReply => ({
	tools: [{ name: "Bash", input: { command, description: "a step" } }],
});

/** What the report says about a run stopped at its limit. */
const stoppedAt = (spentUsd: number, limitUsd: number) => ({
	outcome: "failed",
	transient: false,
	budget: { spentUsd: expect.closeTo(spentUsd, 8), limitUsd },
});

/** How the step's error says it. */
const stopText = (spent: string, limit: string) =>
	`stopped: the run's cost reached ${spent} of its ${limit} limit (limits.max_run_cost_usd)`;

describe("the live watch", () => {
	it("stops claude mid-run once what the broker counted takes the run past its limit", async () => {
		// Each response as the model broker counts it from the answer: 1,200 in, 80 out, 2,000 cache
		// reads and 300 cache writes — at claude-sonnet-4-5's list price $0.006525.
		const perResponse = (1200 * 3 + 80 * 15 + 2000 * 0.3 + 300 * 3.75) / 1e6;
		anthropic.script(
			bash("echo one"),
			// The stop comes while this command runs.
			bash("sleep 20; touch never.txt"),
			bash("echo three"),
			bash("echo four"),
			{ text: "done" },
		);
		const runId = await budgeted({ title: "Costly" }, "models: ['claude:claude-sonnet-4-5']", {
			limitUsd: 5,
			spentUsd: 4.99,
		});
		const report = await w.runTask(runId, realClis());

		// Past $5.00 at the second response: $4.99 + 2 × $0.006525.
		expect(report).toMatchObject(stoppedAt(4.99 + 2 * perResponse, 5));
		expect(report?.error).toBe(stopText("$5.00", "$5.00"));
		// Stopped while the second command ran: had it ended, claude would have asked a third time.
		expect(anthropic.turns).toHaveLength(2);
		// The usage kept is what the server sent for the two responses, as the broker read it; what
		// claude had streamed of it (one output token a response, counted as it starts) is beside it.
		const u = anthropic.usage;
		const streamed = {
			inputTokens: 2 * u.input_tokens,
			outputTokens: 2,
			cacheReadTokens: 2 * u.cache_read_input_tokens,
			cacheWriteTokens: 2 * u.cache_creation_input_tokens,
		};
		expect(report?.usage?.runs).toEqual([
			{
				model: "claude:claude-sonnet-4-5",
				ok: false,
				usage: { ...streamed, outputTokens: 2 * u.output_tokens },
				reported: streamed,
			},
		]);
		// Nothing pushed; the failure on the timeline says why.
		expect((await branches(w.repo.path)).filter((b) => b.includes("costly"))).toEqual([]);
		const failed = (await w.events(runId)).find((e) => e.type === "agent.failed");
		expect(failed?.message).toBe(`claude:claude-sonnet-4-5: ${report?.error}`);
		expect(failed?.data?.budget).toEqual(report?.budget);
	});

	it("stops opencode at the step that takes the run past its limit", async () => {
		// 1,200 prompt and 80 completion tokens a step, at the price the config gives: $0.00408.
		const perStep = (1200 * 3 + 80 * 6) / 1e6;
		const step = (n: number) => ({
			tools: [{ name: "bash", arguments: { command: `echo ${n}`, description: `step ${n}` } }],
		});
		chat.script(step(1), step(2), step(3), step(4), step(5), { text: "done" });
		const runId = await budgeted(
			{ title: "Costly too" },
			[
				"models: ['opencode:lisa/test-coder-1']",
				"pricing: {'opencode:lisa/test-coder-1': {input: 3, output: 6}}",
			].join("\n"),
			{ limitUsd: 1, spentUsd: 0.995 },
		);
		const report = await w.runTask(runId, realClis());

		expect(report).toMatchObject(stoppedAt(0.995 + 2 * perStep, 1));
		expect(report?.error).toBe(stopText("$1.00", "$1.00"));
		// OpenCode reports a step's tokens once its tool calls are done, as it moves on: the third
		// request may have left before the stop landed, never the fourth.
		expect(chat.turns.length).toBeGreaterThanOrEqual(2);
		expect(chat.turns.length).toBeLessThanOrEqual(3);
		expect(report?.usage?.runs).toEqual([
			{
				model: "opencode:lisa/test-coder-1",
				ok: false,
				turns: expect.any(Number),
				usage: { inputTokens: 2400, outputTokens: 160, cacheReadTokens: 0, cacheWriteTokens: 0 },
				// What OpenCode had reported when it was stopped: a step behind, or not.
				reported: expect.objectContaining({ cacheReadTokens: 0 }),
			},
		]);
	}, 90_000);

	it("stops the built-in agent after the response that passes the limit, before its command", async () => {
		// gpt-4.1-mini's list price: 1,200 in and 80 out cost $0.000608 a response.
		const perResponse = (1200 * 0.4 + 80 * 1.6) / 1e6;
		chat.script(
			bashReply("Look.", "ls"),
			bashReply("Write.", "touch never.txt"),
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		const runId = await budgeted({ title: "Costly built-in" }, "models: ['builtin:gpt-4.1-mini']", {
			limitUsd: 2,
			spentUsd: 1.9992,
		});
		const report = await w.runTask(runId, realClis());

		expect(report).toMatchObject(stoppedAt(1.9992 + 2 * perResponse, 2));
		expect(report?.error).toBe(stopText("$2.00", "$2.00"));
		expect(chat.turns).toHaveLength(2);
		expect(report?.usage?.runs).toEqual([
			{
				model: "builtin:gpt-4.1-mini",
				ok: false,
				// Stopped as the broker passed on the second answer: the agent had counted the first.
				turns: 1,
				usage: { inputTokens: 2400, outputTokens: 160, cacheReadTokens: 0, cacheWriteTokens: 0 },
				reported: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0 },
			},
		]);
		const events = JSON.stringify(await w.events(runId));
		expect(events).not.toContain("never.txt'");
	});

	it("counts a model without a price at the dearest price it knows: says so once, and stops it", async () => {
		chat.script(
			bashReply("Write.", "echo hi > LISA_CHANGE.md && git add -A && git commit -qm 'feat: hi'"),
			bashReply("Manifest.", "echo never > never.txt"),
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		const runId = await budgeted({ title: "Unpriced" }, "models: ['builtin:house-model-7']", {
			limitUsd: 1,
			spentUsd: 0.9999,
		});
		const report = await w.runTask(runId, realClis());

		// The endpoint's first response, 1,200 in and 80 out, at the dearest list price ($15 in,
		// $75 out a million: claude-opus-4-1's) takes the run past its limit; it never answers again.
		expect(report).toMatchObject(stoppedAt(0.9999 + (1200 * 15 + 80 * 75) / 1e6, 1));
		expect(chat.turns).toHaveLength(1);
		const notes = (await w.events(runId)).filter((e) => e.type === "agent.unpriced");
		expect(notes.map((e) => e.message)).toEqual([
			"builtin:house-model-7 has no price (set pricing in the config): the budget counts its tokens at the dearest price Lisa knows, or the cost its CLI reports if that is more",
		]);
	});
});

describe("the model broker's gate", () => {
	it("refuses the request after the answer that brought the run to its limit; the run stops at it", async () => {
		// At this price one answer (1,200 in, 80 out) costs exactly $1.00: the run reaches its limit
		// without passing it, so the live watch stops nothing and the broker's gate must.
		chat.script(bashReply("Look.", "echo one"), bashReply("Write.", "touch never.txt"));
		const runId = await budgeted(
			{ title: "Exactly spent" },
			"models: ['builtin:exact-model']\npricing: {'builtin:exact-model': {input: 500, output: 5000}}",
			{ limitUsd: 1, spentUsd: 0 },
		);
		const report = await w.runTask(runId, realClis());

		expect(report).toMatchObject(stoppedAt(1, 1));
		expect(report?.error).toBe(stopText("$1.00", "$1.00"));
		// The second request never reached the model.
		expect(chat.turns).toHaveLength(1);
		const events = await w.events(runId);
		const refused = events.filter((e) => e.type === "broker.refused");
		expect(refused.map((e) => e.message)).toEqual([
			`builtin:exact-model: ${stopText("$1.00", "$1.00")}`,
		]);
		expect(refused[0]?.data).toMatchObject({ status: 403, model: "exact-model" });
		expect(JSON.stringify(events)).not.toContain("never.txt'");
	});
});

describe("between agent runs", () => {
	/** A Claude Code `result` line (what the fake claude prints), claiming `costUsd`. */
	const result = (costUsd: number, outputTokens: number) =>
		JSON.stringify({
			type: "result",
			subtype: "success",
			is_error: false,
			num_turns: 1,
			result: "done",
			total_cost_usd: costUsd,
			modelUsage: {
				"claude-sonnet-4-5": {
					inputTokens: 1000,
					outputTokens,
					cacheReadInputTokens: 0,
					cacheCreationInputTokens: 0,
				},
			},
		});
	const failingValidate = "    validate: ['false']\n";

	it("stops before a validation retry once the run has spent its limit", async () => {
		const runId = await budgeted(
			{ title: "Spent", description: `lisa-fake[claude]: stdout=${result(0.5, 100)}` },
			`${failingValidate}models: ['claude:claude-sonnet-4-5']`,
			{ limitUsd: 5, spentUsd: 4.6 },
		);
		const report = await w.runTask(runId);

		expect(report).toMatchObject(stoppedAt(5.1, 5));
		expect(report?.error).toBe(stopText("$5.10", "$5.00"));
		// One run: validation failed, and the retry was never started.
		expect((await w.agents.callsOf(runId)).map((c) => c.cli)).toEqual(["claude"]);
		expect(report?.usage?.runs).toMatchObject([{ ok: true, usage: { costUsd: 0.5 } }]);
		const types = (await w.events(runId)).map((e) => e.type);
		expect(types).toContain("validation.failed");
		expect(types.filter((t) => t === "agent.started")).toHaveLength(1);
		expect((await branches(w.repo.path)).filter((b) => b.includes("spent"))).toEqual([]);
	});

	it("starts no agent at all when the run had spent its limit at launch", async () => {
		const runId = await budgeted({ title: "Already spent" }, "", { limitUsd: 5, spentUsd: 5 });
		const report = await w.runTask(runId);
		expect(report).toMatchObject(stoppedAt(5, 5));
		expect(await w.agents.callsOf(runId)).toEqual([]);
		expect(report?.usage).toBeUndefined();
	});

	it("counts the larger of a CLI's claimed cost and its tokens at the list price", async () => {
		// The result claims $0.01 for 100,000 output tokens: $1.50 at claude-sonnet-4-5's price.
		const priced = (1000 * 3 + 100_000 * 15) / 1e6;
		const runId = await budgeted(
			{ title: "Cheap claim", description: `lisa-fake[claude]: stdout=${result(0.01, 100_000)}` },
			`${failingValidate}models: ['claude:claude-sonnet-4-5']`,
			{ limitUsd: 5, spentUsd: 4 },
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject(stoppedAt(4 + priced, 5));
		expect((await w.agents.callsOf(runId)).map((c) => c.cli)).toEqual(["claude"]);
	});

	it("without a budget on the step (an older run), watches nothing", async () => {
		const runId = await w.newRun(
			{ title: "No budget", description: `lisa-fake[claude]: stdout=${result(50, 100)}` },
			"models: ['claude:claude-sonnet-4-5']",
		);
		expect(await w.runTask(runId)).toMatchObject({ outcome: "succeeded" });
	});
});

describe("attacks on the watch", () => {
	it("an agent that floods its output is stopped all the same", async () => {
		// Megabytes through claude's tool results, and a line that looks like a free result: printed
		// by a command, it reaches the stream only inside claude's own JSON, never as an event.
		const forged = JSON.stringify({ type: "result", total_cost_usd: 0, modelUsage: {} });
		anthropic.script(
			bash(`seq 1 300000; yes | head -c 3000000; echo '${forged}'`),
			// The stop comes while this command runs, so no third request can race it.
			bash("sleep 20; echo two"),
			bash("echo three"),
			{ text: "done" },
		);
		const perResponse = (1200 * 3 + 80 * 15 + 2000 * 0.3 + 300 * 3.75) / 1e6;
		const runId = await budgeted({ title: "Flood" }, "models: ['claude:claude-sonnet-4-5']", {
			limitUsd: 5,
			spentUsd: 4.99,
		});
		const report = await w.runTask(runId, realClis());
		expect(report).toMatchObject(stoppedAt(4.99 + 2 * perResponse, 5));
		expect(anthropic.turns).toHaveLength(2);
	});
});
