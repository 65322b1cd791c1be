import { describe, expect, it } from "vitest";
import { parseConfig } from "../config/schema";
import { PINNED_CLIS } from "../local/pinned-clis";
import { agentChecks } from "./doctor-checks";

const config = parseConfig({
	source: "linear",
	models: ["claude", "codex"],
	repos: [{ name: "api", url: "https://github.com/acme/api.git" }],
});

describe("the agent CLI checks", () => {
	it("count the CLIs pinned in agents/, which the local stack runs, when PATH has none", () => {
		const checks = agentChecks(config, { PATH: "/nowhere" });
		expect(checks).toEqual([
			{ ok: true, label: `claude agent CLI: ${PINNED_CLIS}/claude` },
			{ ok: true, label: `codex agent CLI: ${PINNED_CLIS}/codex` },
		]);
	});

	it("fail with a fix when neither PATH nor agents/ has the CLI", () => {
		const [claude] = agentChecks(config, { PATH: "/nowhere" }, "/no/agents/bin");
		expect(claude).toEqual({
			ok: false,
			label: "claude agent CLI is not on PATH or in agents/ (models: claude, codex)",
			hint: "npm i -g @anthropic-ai/claude-code (and set ANTHROPIC_API_KEY), or remove it from `models`",
		});
	});
});
