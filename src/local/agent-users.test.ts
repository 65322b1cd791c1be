import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentUidPool, agentUidRange, DEFAULT_AGENT_UIDS } from "./agent-users";

let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-agent-uids-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

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

	it("lend each uid to one step at a time, across pools sharing the locks, never an account's", async () => {
		const locks = path.join(dir, "locks");
		const a = new AgentUidPool({ first: 65533, last: 65535 }, locks);
		const b = new AgentUidPool({ first: 65533, last: 65535 }, locks);
		// 65534 is nobody's account on this machine: never lent.
		const first = await a.take();
		const second = await b.take();
		expect([first, second].sort()).toEqual([65533, 65535]);
		await expect(a.take()).rejects.toThrow(/every agent uid of 65533-65535 .* is in use/);
		await b.give(second);
		expect(await a.take()).toBe(second);
		await a.giveAll();
		await b.giveAll();
	});
});
