import { describe, expect, it } from "vitest";
import { modelAllowed } from "./models";

describe("modelAllowed", () => {
	it("lets a run use the model its entry names, as the API spells it, and nothing else", () => {
		const yes: [string | undefined, string][] = [
			[undefined, "anything-at-all"],
			["claude-sonnet-4-5", "claude-sonnet-4-5"],
			["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"],
			["gpt-4.1", "gpt-4.1-2025-04-14"],
			["sonnet", "claude-sonnet-5-5"],
			["sonnet[1m]", "claude-sonnet-4-5-20250929"],
			["opus", "claude-opus-4-1-20250805"],
			["lisa/test-coder-1", "test-coder-1"],
			["openrouter/anthropic/claude-sonnet-4", "anthropic/claude-sonnet-4"],
			["gemini-2.5-pro", "gemini-2.5-pro"],
		];
		const no: [string, string][] = [
			["claude-sonnet-4-5", "claude-opus-4-1-20250805"],
			["claude-sonnet-4-5", "claude-sonnet-4"],
			["sonnet", "claude-opus-4-1"],
			["gpt-5.5", "gpt-5.5-pro"],
			["claude-sonnet-4-5", "claude-sonnet-4-5-max-20250929"],
			["gpt-5", "gpt-5.5"],
			["lisa/test-coder-1", "test-coder-2"],
			["gemini-2.5-flash", "gemini-2.5-pro"],
		];
		for (const [c, r] of yes) expect(modelAllowed(c, r), `${c} → ${r}`).toBe(true);
		for (const [c, r] of no) expect(modelAllowed(c, r), `${c} → ${r}`).toBe(false);
	});
});
