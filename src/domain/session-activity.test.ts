import { describe, expect, it } from "vitest";
import { newRun, newStep, planStep, type Run } from "./run";
import { finalActivity, planAction, promptReply, stepAction } from "./session-activity";

describe("a session's last activity", () => {
	it("ends with the PR links, the stop, or the error", () => {
		const base = newRun({
			runId: "01R",
			source: "linear",
			issueId: "issue-1",
			issueKey: "ENG-1",
			trigger: "webhook",
			now: "t",
		});
		const run = (over: Partial<Run>): Run =>
			({
				...base,
				steps: [{ ...newStep(0, "api"), prUrl: "https://github.com/acme/api/pull/1" }],
				...over,
			}) as Run;
		expect(finalActivity(run({ status: "succeeded" }), "http://x/runs/01R")).toEqual({
			type: "response",
			body: "Opened a pull request:\n- https://github.com/acme/api/pull/1\n\ncost $0.00: 0 tokens, 0 agent minutes\nRun: http://x/runs/01R",
		});
		expect(
			finalActivity(
				run({ status: "cancelled", error: "stopped in Linear by Ada", steps: [] }),
				"u",
			),
		).toEqual({
			type: "response",
			body: "Stopped: stopped in Linear by Ada.\n\ncost $0.00: 0 tokens, 0 agent minutes\nRun: u",
		});
		expect(finalActivity(run({ status: "failed", error: "tests failed" }), "u")).toMatchObject({
			type: "error",
			body: expect.stringMatching(
				/^Could not resolve this issue: tests failed\n\nPull requests opened before the failure:/,
			),
		});
		expect(promptReply(run({ status: "running" }), "u", false).type).toBe("thought");
		expect(promptReply(run({ status: "succeeded" }), "u", true)).toMatchObject({
			type: "response",
		});
	});
});

describe("multi-repo activities", () => {
	it("show the plan as an action (orders in sequence, equal orders side by side) and count only repo steps", () => {
		const plan = {
			steps: [
				{ repo: "api", scope: "Add the endpoint", order: 1 },
				{ repo: "web", scope: "Use it", order: 2 },
				{ repo: "docs", scope: "Document it", order: 2 },
			],
		};
		expect(planAction(plan)).toEqual({
			type: "action",
			action: "Planned",
			parameter: "api → web + docs",
			result: "1. api — Add the endpoint\n2. web — Use it\n2. docs — Document it",
		});
		const run: Run = {
			...newRun({ runId: "R", source: "linear", issueId: "i", trigger: "webhook", now: "t" }),
			status: "running",
			steps: [
				{ ...planStep(0), status: "succeeded" },
				{ ...newStep(1, "api"), status: "succeeded", prUrl: "https://github.com/a/api/pull/1" },
				newStep(2, "web"),
			],
		};
		expect(stepAction(run, 1)).toEqual({
			type: "action",
			action: "Opened pull request",
			parameter: "https://github.com/a/api/pull/1",
			result: "api: step 1 of 2 done",
		});
	});
});
