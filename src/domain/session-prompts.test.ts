import { describe, expect, it } from "vitest";
import type { SessionPrompt } from "./run";
import { addPrompt } from "./session-prompts";

const prompt = (n: number): SessionPrompt => ({
	id: `a${n}`,
	body: `message ${n}`,
	at: new Date(Date.UTC(2026, 10, 21, 12, 0, n)).toISOString(),
});

describe("addPrompt", () => {
	it("keeps the newest follow-ups and counts the ones it drops", () => {
		let run: { prompts?: SessionPrompt[]; promptsDropped?: number } = {};
		for (let n = 1; n <= 7; n++) run = addPrompt(run, prompt(n), 3) ?? run;
		expect(run.prompts?.map((p) => p.id)).toEqual(["a5", "a6", "a7"]);
		expect(run.promptsDropped).toBe(4);
	});

	it("adds nothing for a redelivered follow-up, kept or already dropped", () => {
		let run: { prompts?: SessionPrompt[]; promptsDropped?: number } = {};
		for (let n = 1; n <= 4; n++) run = addPrompt(run, prompt(n), 3) ?? run;
		expect(addPrompt(run, prompt(3), 3)).toBeUndefined();
		expect(addPrompt(run, prompt(1), 3)).toBeUndefined();
	});

	it("orders a late delivery by when it was written", () => {
		const run = { prompts: [prompt(1), prompt(3)] };
		expect(addPrompt(run, prompt(2), 5)?.prompts.map((p) => p.id)).toEqual(["a1", "a2", "a3"]);
	});
});
