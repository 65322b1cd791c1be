import { describe, expect, it } from "vitest";
import { MAX_FOLLOW_UP_TEXT } from "../../domain/follow-up";
import { newRun, newStep, planStep, type Run } from "../../domain/run";
import {
	type AgentSessionEvent,
	agentSessionVerdict,
	finalActivity,
	planAction,
	promptReply,
	stepAction,
} from "./session";

const session = {
	id: "as-1",
	issue: { id: "issue-1", identifier: "ENG-1" },
	creator: { id: "u-ada", name: "Ada" },
};

describe("Linear agent session rules", () => {
	it("starts a run on created, stops on the stop signal, records other prompts", () => {
		expect(
			agentSessionVerdict({ type: "AgentSessionEvent", action: "created", agentSession: session }),
		).toEqual({
			kind: "start",
			sessionId: "as-1",
			issueId: "issue-1",
			issueKey: "ENG-1",
		});
		expect(
			agentSessionVerdict({
				action: "prompted",
				agentSession: session,
				agentActivity: { id: "act-1", signal: "stop", content: { body: "stop" } },
			}),
		).toEqual({ kind: "stop", sessionId: "as-1", issueId: "issue-1", by: "Ada" });
		expect(
			agentSessionVerdict({
				action: "prompted",
				agentSession: session,
				agentActivity: {
					id: "act-2",
					content: { body: "Also the docs" },
					userId: "u-bob",
					user: { id: "u-bob", name: "Bob" },
				},
			}),
		).toEqual({
			kind: "prompt",
			sessionId: "as-1",
			issueId: "issue-1",
			activityId: "act-2",
			body: "Also the docs",
			author: "Bob",
			authorId: "u-bob",
		});
		// Without a user on the activity, the creator's name is shown, but never taken for its author.
		expect(
			agentSessionVerdict({
				action: "prompted",
				agentSession: session,
				agentActivity: { id: "act-3", content: { body: "continue" } },
			}),
		).toEqual({
			kind: "prompt",
			sessionId: "as-1",
			issueId: "issue-1",
			activityId: "act-3",
			body: "continue",
			author: "Ada",
		});
	});

	it("carries what created the session into the run: the mention, else Linear's prompt context", () => {
		const context = '<issue identifier="ENG-1">\n<title>Fix it</title>\n</issue>';
		const created = (over: Partial<AgentSessionEvent> = {}): AgentSessionEvent => ({
			type: "AgentSessionEvent",
			action: "created",
			agentSession: {
				...session,
				comment: { id: "c-1", body: "@Lisa please fix the redirect", userId: "u-ada" },
			},
			promptContext: context,
			...over,
		});
		expect(agentSessionVerdict(created())).toMatchObject({
			kind: "start",
			request: { text: "@Lisa please fix the redirect", author: "Ada" },
		});
		// Delegated (no comment): Linear's context of the issue is what asked.
		const delegated = created({ agentSession: session });
		expect(agentSessionVerdict(delegated)).toMatchObject({
			request: { text: context, author: "Ada" },
		});
		const blank = created({ agentSession: { ...session, comment: { body: "  " } } });
		expect(agentSessionVerdict(blank)).toMatchObject({ request: { text: context } });
		// Nothing to carry: no request at all.
		const bare = agentSessionVerdict(created({ agentSession: session, promptContext: null }));
		expect(bare).toEqual({
			kind: "start",
			sessionId: "as-1",
			issueId: "issue-1",
			issueKey: "ENG-1",
		});
		// A long mention is cut to what a run keeps, never refused (Linear would retry).
		const long = "x".repeat(MAX_FOLLOW_UP_TEXT + 10);
		const cut = agentSessionVerdict(
			created({ agentSession: { id: "as-1", issueId: "issue-1", comment: { body: long } } }),
		);
		expect(cut).toEqual({
			kind: "start",
			sessionId: "as-1",
			issueId: "issue-1",
			request: { text: long.slice(0, MAX_FOLLOW_UP_TEXT) },
		});
	});

	it("ignores sessions without an issue and unknown actions", () => {
		expect(agentSessionVerdict({ action: "created", agentSession: { id: "as-2" } })).toEqual({
			kind: "ignore",
			reason: "the agent session is not on an issue",
		});
		expect(agentSessionVerdict({ action: "updated", agentSession: session })).toEqual({
			kind: "ignore",
			reason: "agent session updated is not handled",
		});
		expect(agentSessionVerdict({ action: "created" })).toEqual({
			kind: "ignore",
			reason: "payload has no agent session",
		});
	});

	it("ends with the PR links, the stop, or the error", () => {
		const base = newRun({
			runId: "01R",
			source: "linear",
			issueId: "issue-1",
			issueKey: "ENG-1",
			trigger: "webhook",
			now: "t",
		});
		const run = (over: Partial<Run>): Run => ({
			...base,
			steps: [{ ...newStep(0, "api"), prUrl: "https://github.com/acme/api/pull/1" }],
			...over,
		});
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

	it("a prompt says when it was written (an approval counts only for an older request)", () => {
		const prompted = (createdAt?: string) =>
			agentSessionVerdict({
				action: "prompted",
				agentSession: session,
				agentActivity: { id: "act-9", content: { body: "continue" }, createdAt },
			});
		expect(prompted("2026-11-24T12:00:00Z")).toMatchObject({
			writtenAt: "2026-11-24T12:00:00.000Z",
		});
		expect(prompted("yesterday")).not.toHaveProperty("writtenAt");
		expect(prompted()).not.toHaveProperty("writtenAt");
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
