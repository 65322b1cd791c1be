import { expect, it } from "vitest";
import { agentsLine } from "./doctor";

it("says whether each agent's network is confined, or that it reaches any host", () => {
	const uids = { first: 61000, last: 61063 };
	expect(agentsLine(uids, true)).toContain(
		"run as uids 61000-61063, one per running step: they cannot read Lisa's secrets (LISA_AGENT_UIDS); each in a network of its own that reaches only its model broker and, through Lisa's egress proxy, the code host and the repo's network.allow",
	);
	expect(agentsLine(uids, false)).toContain("with the machine's network: they can reach any host");
	expect(agentsLine(undefined)).toMatch(/^ {2}! agents: .* reach any host\. To isolate them/);
});
