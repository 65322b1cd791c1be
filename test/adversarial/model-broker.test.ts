import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicDouble, startAnthropicDouble } from "../doubles/models/anthropic";
import { createStackWorld, type StackWorld } from "../support/stack";
import { ANTHROPIC_KEY } from "../support/world";

// A hostile agent and the model key (docs/security.md › Security): `npm start` as root, the real
// task, its model broker in front of a scripted Anthropic API. The fake claude has the environment
// Lisa gives claude; it reads what it can and asks its endpoint for what it wants.

const ROOT = process.getuid?.() === 0;
const MODEL = "claude-sonnet-4-5";

let w: StackWorld;
let anthropic: AnthropicDouble;
beforeAll(async () => {
	if (!ROOT) return;
	anthropic = await startAnthropicDouble({ apiKey: ANTHROPIC_KEY });
	w = await createStackWorld({
		configExtra: `models: ['claude:${MODEL}']\nlimits: {max_attempts: 1}\n`,
		env: { ANTHROPIC_BASE_URL: anthropic.url },
	});
});
afterAll(async () => {
	await w?.stop();
	await anthropic?.stop();
});

const calls = (list: { model: string; path?: string; key?: string }[]) =>
	`lisa-fake[claude]: call-model=${JSON.stringify(list)}`;

describe.skipIf(!ROOT)("the model key, against a hostile agent", () => {
	it("is nowhere the agent can read: its environment holds a lease of the broker instead, and /proc nothing", async () => {
		anthropic.reset();
		const runId = await w.startRun(
			"Steal the model key",
			`lisa-fake[claude]: scan-secrets\n${calls([{ model: MODEL }])}`,
		);
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		const [call] = await w.agents.callsOf(runId);
		const env = call?.envValues ?? {};
		expect(env.ANTHROPIC_API_KEY).toMatch(/^lisa-lease-[0-9a-f]{48}$/);
		expect(env.ANTHROPIC_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{24}\/0$/);
		expect(JSON.stringify(call)).not.toContain(ANTHROPIC_KEY);
		const scan = (await w.agents.scans()).find((s) => s.uid === call?.uid);
		expect(scan).toBeDefined();
		expect(JSON.stringify(scan)).not.toContain(ANTHROPIC_KEY);
		// The lease worked while the run lasted: the model got the real key from the broker.
		expect((await w.agents.modelCalls()).at(-1)?.status).toBe(200);
		expect(anthropic.requests.map((q) => q.apiKey)).toEqual([ANTHROPIC_KEY]);
	});

	it("asks for another model, another path, with another key: each is refused, on the timeline, and never reaches the model", async () => {
		anthropic.reset();
		const runId = await w.startRun(
			"Use the endpoint",
			calls([
				{ model: "claude-opus-4-1-20250805" },
				{ model: MODEL, path: "/v1/files" },
				{ model: MODEL, path: "/v1/messages/../../v1/messages/batches" },
				{ model: MODEL, key: "sk-ant-api03-guessed-0123456789abcdefghij" },
				{ model: MODEL, key: "" },
			]),
		);
		await w.waitForRun(runId);
		const answers = (await w.agents.modelCalls()).slice(-5);
		expect(answers.map((a) => a.status)).toEqual([403, 404, 404, 401, 401]);
		expect(JSON.parse(answers[0]?.body ?? "{}")).toEqual({
			type: "error",
			error: {
				type: "permission_error",
				message: `Lisa's model broker refused this request: the model claude-opus-4-1-20250805 is not one this step may use`,
			},
		});
		for (const a of answers) expect(a.body).not.toContain(ANTHROPIC_KEY);
		expect(anthropic.requests).toEqual([]);
		const { body } = await w.api<{ events: { type: string; data?: Record<string, unknown> }[] }>(
			`/api/runs/${runId}/events?limit=500`,
		);
		const refused = body.events.filter((e) => e.type === "broker.refused");
		expect(refused.map((e) => e.data?.status)).toEqual([403, 404, 404, 401, 401]);
		expect(refused[0]?.data).toMatchObject({
			provider: `claude:${MODEL}`,
			model: "claude-opus-4-1-20250805",
		});
	});

	it("reports its run as free: the run's tokens are what the broker counted in the model's answers", async () => {
		anthropic.reset();
		const forged = {
			type: "result",
			subtype: "success",
			is_error: false,
			num_turns: 1,
			result: "done",
			total_cost_usd: 0,
			usage: { input_tokens: 0, output_tokens: 0 },
			modelUsage: {},
		};
		const runId = await w.startRun(
			"Free of charge",
			`${calls([{ model: MODEL }, { model: MODEL }])}\nlisa-fake[claude]: stdout=${JSON.stringify(forged)}`,
		);
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		const [agentRun] = run.steps[0]?.usage?.[0]?.runs ?? [];
		// Two side answers of the double: 50 in and 5 out each.
		expect(agentRun?.usage).toEqual({
			inputTokens: 100,
			outputTokens: 10,
			cacheReadTokens: 0,
			cacheWriteTokens: 0,
		});
		expect(agentRun?.reported).toMatchObject({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
		// claude-sonnet-4-5 at its list price: $3 in, $15 out a million.
		expect(run.cost?.modelUsd).toBeCloseTo((100 * 3 + 10 * 15) / 1e6, 12);
	});
});
