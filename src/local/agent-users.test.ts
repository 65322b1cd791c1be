import { describe, expect, it } from "vitest";
import { agentUidRange, DEFAULT_AGENT_UIDS } from "./agent-users";

// The pool itself, raced by stacks of their own, is tried in test/adversarial/agent-uids.test.ts.

describe("the agents' uids (LISA_AGENT_UIDS)", () => {
	it("default to a pool when the stack runs as root, and to none otherwise", () => {
		expect(DEFAULT_AGENT_UIDS).toBe("61000-61063");
		expect(agentUidRange(undefined, true)).toEqual({ first: 61000, last: 61063 });
		expect(agentUidRange(undefined, false)).toBeUndefined();
		expect(agentUidRange("off", true)).toBeUndefined();
		expect(agentUidRange(" 70000-70001 ", true)).toEqual({ first: 70000, last: 70001 });
	});

	it.each(["0-5", "10-9", "abc", "61000", "61000-"])("refuse %j with the form to use", (value) => {
		expect(() => agentUidRange(value, true)).toThrow(/LISA_AGENT_UIDS must be "first-last"/);
	});

	it("need root, and say so", () => {
		expect(() => agentUidRange("70000-70001", false)).toThrow(/only a stack running as root/);
	});
});
