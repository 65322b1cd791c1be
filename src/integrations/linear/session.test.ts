import { describe, expect, it } from "vitest";
import { MAX_FOLLOW_UP_TEXT } from "../../domain/follow-up";
import { type AgentSessionEvent, agentSessionVerdict } from "./session";

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
