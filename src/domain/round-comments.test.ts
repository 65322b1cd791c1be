import { describe, expect, it } from "vitest";
import { defuseMentions, guardComment } from "./round-comments";
import { newRun } from "./run";

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
});
