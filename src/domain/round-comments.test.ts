import { describe, expect, it } from "vitest";
import { defuseMentions, guardComment, roundIssueLine, roundPrComment } from "./round-comments";
import { newRun, newStep, type Run } from "./run";

describe("what Lisa posts of the agent's and CI's words", () => {
	it("pings nobody: every @name is broken, e-mail addresses and the rest stay", () => {
		const text = "Thanks @octocat and @acme/team; mail me@example.com. cc @ ";
		const out = defuseMentions(text);
		expect(out).not.toMatch(/@[A-Za-z0-9]/);
		expect(out.replace(/\u200b/g, "")).toBe(text);
	});

	it("the no-progress guard's comment names the checks and their first error lines", () => {
		const parent = newRun({
			runId: "01PARENT",
			source: "github",
			issueId: "acme/api#1",
			trigger: "webhook",
			now: "2026-11-24T10:00:00.000Z",
		});
		const body = guardComment(
			parent,
			[
				{
					name: "test",
					conclusion: "failure",
					annotations: [{ message: "ping @maintainers: expected 1" }],
				},
			],
			"https://lisa.example.com/runs/01PARENT",
		);
		expect(body).toContain("- test (failure): ping @\u200bmaintainers: expected 1");
		expect(body).toContain("<!-- lisa:run=01PARENT -->");
	});

	it("a round's comment and issue line carry the round's own cost", () => {
		const round: Run = {
			...newRun({
				runId: "01ROUND",
				source: "github",
				issueId: "acme/api#1",
				trigger: "ci_failure",
				now: "2026-11-24T10:00:00.000Z",
			}),
			status: "succeeded",
			parentRunId: "01PARENT",
			round: { number: 1, prUrl: "https://github.com/acme/api/pull/2", repo: "api", branch: "b" },
			steps: [
				{
					...newStep(0, "api"),
					status: "succeeded",
					usage: [
						{
							attempt: 1,
							runs: [],
							total: {
								inputTokens: 9_000,
								outputTokens: 1_000,
								cacheReadTokens: 0,
								cacheWriteTokens: 0,
							},
							seconds: 120,
							cost: { modelUsd: 0.1, knownModelUsd: 0.1, computeUsd: 0.02 },
						},
					],
				},
			],
		};
		expect(roundPrComment(round, "u")).toContain(
			"\ncost $0.12: 10k tokens, 2 agent minutes\nRun: u\n",
		);
		expect(roundIssueLine(round, "u")).toMatch(
			/^Lisa round 1 \(CI failure\) on \S+ pushed new commits\. Run: u \(cost \$0\.12: 10k tokens, 2 agent minutes\)\n/,
		);
	});
});
