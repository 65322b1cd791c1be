import { describe, expect, it } from "vitest";
import { parseConfig } from "../config/schema";
import { credentialChecks, imageAgentChecks } from "./agent-checks";

const config = (models: string[]) =>
	parseConfig({
		source: "linear",
		models,
		repos: [{ name: "api", url: "https://github.com/acme/api.git" }],
	});

describe("the model credentials check", () => {
	it("fails a model without its key when agents run as other uids: a CLI login cannot reach them", () => {
		const [claude] = credentialChecks(config(["claude"]), {}, true);
		expect(claude).toEqual({
			ok: false,
			label:
				"claude has no credentials: none of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX is set, and agents run as their own uids with an empty home, so a CLI login cannot reach them",
			hint: "export ANTHROPIC_API_KEY (a key from console.anthropic.com), or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`",
		});
	});

	it("passes a model whose key is set, naming the variable (never its value)", () => {
		const checks = credentialChecks(
			config(["claude", "codex"]),
			{ ANTHROPIC_API_KEY: "sk-ant-secret", CODEX_API_KEY: "sk-secret" },
			true,
		);
		expect(checks).toEqual([
			{ ok: true, label: "claude credentials: ANTHROPIC_API_KEY" },
			{ ok: true, label: "codex credentials: CODEX_API_KEY" },
		]);
		expect(JSON.stringify(checks)).not.toContain("secret");
	});

	it("leaves it to the user's own login when agents run as the user", () => {
		const [gemini] = credentialChecks(config(["gemini"]), { GEMINI_API_KEY: " " }, false);
		expect(gemini?.ok).toBe("skip");
		expect(gemini?.label).toContain("the agent relies on your own gemini login");
	});

	it("asks opencode for the key of the model's provider, and nothing of the builtin agent", () => {
		const checks = credentialChecks(
			config([
				"opencode:openrouter/qwen3",
				"opencode:lisa/m",
				"opencode:google/gemini",
				"builtin:m",
			]),
			{ OPENCODE_LISA_BASE_URL: "http://127.0.0.1:1" },
			true,
		);
		expect(checks.map((c) => [c.ok, c.label.split(":")[0]])).toEqual([
			[false, "opencode"],
			[true, "opencode"],
		]);
		expect(checks[0]?.hint).toBe("export OPENROUTER_API_KEY");
	});
});

describe("the agent CLIs of the task image (LISA_LAUNCHER=container)", () => {
	it("fails a model whose CLI the image lacks, with the build that adds it", () => {
		const image = { name: "localhost/lisa-agent:latest", clis: ["claude"] };
		const checks = imageAgentChecks(config(["claude", "codex"]), { ANTHROPIC_API_KEY: "k" }, image);
		expect(checks.slice(0, 2)).toEqual([
			{ ok: true, label: "claude: in the task image localhost/lisa-agent:latest" },
			{
				ok: false,
				label: "codex is not in the task image localhost/lisa-agent:latest (it has claude)",
				hint: 'npm run image -- --clis "claude codex"',
			},
		]);
	});
});
