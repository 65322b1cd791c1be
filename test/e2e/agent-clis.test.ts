import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderName } from "../../src/config/schema";
import type { TokenUsage } from "../../src/domain/usage";
import { type AnthropicDouble, startAnthropicDouble } from "../doubles/models/anthropic";
import { type GeminiDouble, startGeminiDouble } from "../doubles/models/gemini-api";
import { type OpenAiChatDouble, startOpenAiChatDouble } from "../doubles/models/openai-chat";
import {
	type ResponsesDouble,
	shell,
	startResponsesDouble,
} from "../doubles/models/openai-responses";
import { AGENT_CLI_PATH, AS_ROOT, agentUidCliPath, modelEnv } from "../support/agent-cli";
import { git } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";

// Webhook → the real agent CLI, at the pinned version, driven by a scripted local model → pull
// request, on the whole local stack: one issue per CLI. As root (CI) each CLI runs as an agent uid.

/** What every scripted model does: one shell command that commits the change and writes the manifest. */
const WORK = [
	"printf 'Hello\\n' > GREETING.md",
	"git add GREETING.md",
	"git commit -q -m 'feat: add a greeting'",
	`printf '{"prTitle":"feat: add a greeting","prBody":"- **What**: a greeting"}' > .lisa-manifest.json`,
].join(" && ");
const DONE = "Added GREETING.md, committed it and wrote the manifest.";

let w: StackWorld;
let claude: AnthropicDouble;
let codex: ResponsesDouble;
let gemini: GeminiDouble;
let opencode: OpenAiChatDouble;

beforeAll(async () => {
	[claude, codex, gemini, opencode] = await Promise.all([
		startAnthropicDouble(),
		startResponsesDouble(),
		startGeminiDouble(),
		startOpenAiChatDouble(),
	]);
	w = await createStackWorld({
		configExtra: "models: [claude]\nlimits: {max_attempts: 1}",
		env: {
			// The pinned CLIs instead of the fake ones, where the agent uids can run them.
			PATH: AS_ROOT ? await agentUidCliPath() : AGENT_CLI_PATH,
			...modelEnv("claude", claude),
			...modelEnv("codex", codex),
			...modelEnv("gemini", gemini),
			...modelEnv("opencode", opencode),
		},
	});
});
afterAll(async () => {
	await w?.stop();
	await Promise.all([claude, codex, gemini, opencode].map((d) => d?.stop()));
});

/** Runs the issue with `models: [model]` and returns the finished run. */
async function resolveWith(model: string, title: string) {
	await writeFile(
		w.configFile,
		(await readFile(w.configFile, "utf8")).replace(/^models: .*$/m, `models: [${model}]`),
	);
	const res = await w.sendWebhook(
		w.createdWebhook(w.issue(title, "Add GREETING.md saying hello.")),
	);
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	return w.waitForRun(runId, undefined, 240_000);
}

async function expectPullRequest(
	run: Awaited<ReturnType<typeof resolveWith>>,
	provider: ProviderName,
	model: { billed: TokenUsage },
) {
	expect(run.status, run.error).toBe("succeeded");
	const step = run.steps[0];
	expect(step?.provider).toBe(provider === "opencode" ? "opencode:lisa/coder" : provider);
	const branch = step?.branch ?? "";
	expect(await git(w.repo.path, "log", "-1", "--format=%s", branch)).toBe("feat: add a greeting");
	expect(await git(w.repo.path, "show", `${branch}:GREETING.md`)).toBe("Hello");
	const pr = w.github.pulls("acme/api").find((p) => p.head.ref === branch);
	expect(pr?.title).toBe("feat: add a greeting");
	// What the model billed is on the step, per attempt, as the task's model broker counted it in
	// the answers; the CLI's report beside it.
	expect(step?.usage?.[0]).toMatchObject({ attempt: 1, runs: [{ ok: true, usage: model.billed }] });
	expect(model.billed.outputTokens).toBeGreaterThan(0);
	return step?.usage?.[0]?.runs[0]?.reported;
}

describe("each agent CLI, for real, from webhook to pull request", { timeout: 240_000 }, () => {
	it("claude", async () => {
		claude.script(
			{ tools: [{ name: "Bash", input: { command: WORK, description: "Do the work" } }] },
			{ text: DONE },
		);
		const run = await resolveWith("claude", "Claude adds a greeting");
		const reported = await expectPullRequest(run, "claude", claude);
		expect(reported?.costUsd).toBeGreaterThan(0);
		expect(claude.turns.every((t) => t.apiKey === claude.apiKey)).toBe(true);
	});

	it("codex", async () => {
		codex.script({ calls: [shell(WORK)] }, { text: DONE });
		const run = await resolveWith("codex", "Codex adds a greeting");
		await expectPullRequest(run, "codex", codex);
		expect(codex.requests.every((r) => r.authorized)).toBe(true);
	});

	it("gemini", async () => {
		gemini.script(
			{ calls: [{ name: "run_shell_command", args: { command: WORK } }] },
			{ text: DONE },
		);
		const run = await resolveWith("gemini", "Gemini adds a greeting");
		await expectPullRequest(run, "gemini", gemini);
	});

	it("opencode", async () => {
		opencode.script(
			{ tools: [{ name: "bash", arguments: { command: WORK, description: "Do the work" } }] },
			{ text: DONE },
		);
		const run = await resolveWith("opencode:lisa/coder", "Opencode adds a greeting");
		await expectPullRequest(run, "opencode", opencode);
	});
});
