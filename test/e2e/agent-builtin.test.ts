import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
	bashReply,
	type OpenAiChatDouble,
	startOpenAiChatDouble,
} from "../doubles/models/openai-chat";
import { git } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";

// The built-in agent on the whole local stack, against a local OpenAI-compatible endpoint.

let w: StackWorld;
let llm: OpenAiChatDouble;
beforeAll(async () => {
	llm = await startOpenAiChatDouble();
	w = await createStackWorld({
		configExtra: "models: [builtin, claude]\nlimits: {max_attempts: 1}",
		env: {
			LISA_LLM_BASE_URL: llm.url,
			LISA_LLM_API_KEY: llm.apiKey,
			LISA_LLM_MODEL: "local-model",
		},
	});
});
afterAll(async () => {
	await w.stop();
	await llm.stop();
});

describe("the built-in agent", () => {
	it("implements an issue in the repo", async () => {
		llm.script(
			bashReply("Look around first.", "git status --short && ls"),
			bashReply(
				"Write the greeting and commit it.",
				"printf 'Hello from the built-in agent\\n' > GREETING.md && git add -A && git commit -q -m 'feat: add a greeting'",
			),
			bashReply(
				"Write the manifest.",
				`cat <<'EOF' > .lisa-manifest.json\n{"prTitle": "feat: add a greeting", "prBody": "- **What**: a greeting\\n- **Testing**: none needed"}\nEOF`,
			),
			bashReply("Done.", "echo TASK_COMPLETE"),
		);
		const runId = await w.startRun("Add a greeting", "Add GREETING.md saying hello.");
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]).toMatchObject({
			provider: "builtin",
			branch: "feat/eng-1-add-a-greeting",
		});
		const branch = "feat/eng-1-add-a-greeting";
		expect(await git(w.repo.path, "log", "-1", "--format=%s %an", branch)).toBe(
			"feat: add a greeting Lisa",
		);
		expect(await git(w.repo.path, "ls-tree", "-r", "--name-only", branch)).toBe(
			"GREETING.md\nREADME.md",
		);
		const pr = w.github.pulls("acme/api").find((p) => p.head.ref === branch);
		expect(pr?.title).toBe("feat: add a greeting");
		expect(pr?.body).toContain("- **What**: a greeting");

		const requests = llm.requests.slice(-4);
		expect(requests.every((r) => r.authorized && r.model === "local-model")).toBe(true);
		expect(requests[0]?.messages[1]?.content).toContain(
			"```untrusted-issue\nENG-1: Add a greeting",
		);
	});

	it("falls back to the next model when the endpoint answers 429", async () => {
		llm.otherwise(() => ({ status: 429 }));
		const runId = await w.startRun("Busy endpoint");
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]?.provider).toBe("claude");
		const { body } = await w.api<{ events: { type: string; message: string }[] }>(
			`/api/runs/${runId}/events`,
		);
		expect(body.events.find((e) => e.type === "agent.failed")?.message).toMatch(
			/^builtin exited with code 1: [\s\S]*HTTP 429 Too Many Requests: Rate limit reached for local-model/,
		);
	});
});
