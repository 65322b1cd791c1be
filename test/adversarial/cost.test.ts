import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTerminalRun, type RunStatus } from "../../src/domain/states";
import type { GitHubPull } from "../doubles/github/server";
import { checkSuiteEvent, issuesEvent } from "../doubles/github/webhook";
import { createStackWorld, type StackWorld } from "../support/stack";
import type { ApiRun } from "../support/world";

// An agent CLI that says its run was free (docs/cost.md › Cost and budgets): Claude Code's `result`
// line claims `total_cost_usd: 0` for a million output tokens. The recorded cost is never below the
// tokens at the model's list price, and a model Lisa cannot price is recorded as unknown, never as
// a known $0; either way the next round of the pull request is refused against the $1 limit. The
// whole local stack, the real task and claude's real output parser; the fake claude prints the lines.

const REPO = "acme/api";
const human = "ada";
let w: StackWorld;

beforeAll(async () => {
	w = await createStackWorld({
		source: "github",
		configExtra:
			"limits: {max_attempts: 1, max_run_cost_usd: 1}\nfollow_up: {debounce_seconds: 1}\n",
	});
});
afterAll(() => w.stop());

/** Claude Code's first and last lines: the model it served, and a free million output tokens. */
function freeMillion(model: string): string {
	const tokens = { inputTokens: 0, outputTokens: 1e6, cacheReadInputTokens: 0 };
	const init = { type: "system", subtype: "init", claude_code_version: "2.0.50", model };
	const result = {
		type: "result",
		subtype: "success",
		is_error: false,
		num_turns: 1,
		result: "done",
		total_cost_usd: 0,
		usage: { input_tokens: 0, output_tokens: 1e6 },
		modelUsage: { [model]: { ...tokens, cacheCreationInputTokens: 0, costUSD: 0 } },
	};
	return [init, result].map((e) => `lisa-fake[claude]: stdout=${JSON.stringify(e)}`).join("\n");
}

/** A run of an issue whose agent says `model` served it for free; its pull request. */
async function freeRun(title: string, model: string): Promise<{ run: ApiRun; pull: GitHubPull }> {
	const body = `Make it work.\n${freeMillion(model)}`;
	const issue = w.github.addIssue(REPO, { title, body, labels: ["lisa"], user: human });
	const event = issuesEvent(w.github, REPO, issue, { label: "lisa", sender: human });
	const res = await w.sendGitHub("issues", event);
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	const run = await w.waitForRun(runId, undefined, 120_000);
	// The CLI's word stopped nothing: it came with the run's last line.
	expect(run.status).toBe("succeeded");
	expect(run.steps[0]?.usage?.[0]?.runs[0]?.usage).toMatchObject({
		outputTokens: 1e6,
		costUsd: 0,
	});
	const pull = w.github.pulls(REPO).find((p) => p.body?.includes(run.id));
	expect(pull).toBeDefined();
	return { run, pull: pull as GitHubPull };
}

/** Red CI on the run's pull request starts a round: the round once it launched, paused or ended. */
async function nextRound(parent: ApiRun, pull: GitHubPull): Promise<ApiRun> {
	w.github.setChecks(REPO, pull.head.sha, [
		{ name: "test", conclusion: "failure", output: { title: "test failed", summary: "1 failed" } },
	]);
	const res = await w.sendGitHub("check_suite", checkSuiteEvent(w.github, REPO, pull));
	expect(res.status).toBe(202);
	const roundOf = (r: ApiRun) =>
		(r as unknown as { followUps: { runId: string }[] }).followUps[0]?.runId;
	const id = roundOf(await w.waitForRun(parent.id, (r) => roundOf(r) !== undefined, 30_000));
	return w.waitForRun(
		id as string,
		(r) => r.status === "awaiting_approval" || isTerminalRun(r.status as RunStatus),
		90_000,
	);
}

describe("a CLI that reports a run as free", () => {
	it("is recorded at its tokens' list price, and the pull request's next round is refused", async () => {
		const { run, pull } = await freeRun("Free opus", "claude-opus-4-1-20250805");

		// A million output tokens of Claude Opus 4.1 at its list price: $75, whatever the CLI said.
		expect(run.cost).toMatchObject({ modelUsd: 75, totalUsd: 75, knownUsd: 75, unknown: [] });
		expect(run.steps[0]?.usage?.[0]?.cost).toMatchObject({ modelUsd: 75, knownModelUsd: 75 });

		const round = await nextRound(run, pull);
		expect(round.status).toBe("awaiting_approval");
		expect(round.approval).toMatchObject({ spentUsd: 75, limitUsd: 1 });
		expect(await w.agents.callsOf(round.id)).toEqual([]);
	}, 240_000);

	it("of a model Lisa cannot price is recorded as unknown, and budgets count its tokens at the dearest price", async () => {
		const { run, pull } = await freeRun("Free house model", "claude-house-9");

		const why =
			"claude (claude-house-9): no price (set pricing in the config); its CLI reported $0.00, a floor";
		expect(run.cost).toMatchObject({
			modelUsd: null,
			totalUsd: null,
			knownUsd: 0,
			unknown: [why],
		});
		// What budgets count: the million output tokens at the dearest list price ($75, Opus 4.1's).
		expect(run.steps[0]?.usage?.[0]?.cost).toEqual({
			modelUsd: null,
			knownModelUsd: 0,
			spentModelUsd: 75,
			computeUsd: 0,
			unknown: [why],
		});

		const round = await nextRound(run, pull);
		expect(round.status).toBe("awaiting_approval");
		expect(round.approval).toMatchObject({ spentUsd: 75, limitUsd: 1 });
		expect(await w.agents.callsOf(round.id)).toEqual([]);
	}, 240_000);
});
