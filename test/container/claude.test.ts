import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AnthropicDouble, startAnthropicDouble } from "../doubles/models/anthropic";
import { modelEnv } from "../support/agent-cli";
import { CONTAINER_AGENT_UIDS, describeWithImage } from "../support/container";
import { git } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";

// The real `claude` CLI, as the image installs it (the version agents/package.json pins), in the
// task's container, against the scripted Anthropic server on the host's loopback (the container
// has the host's network): from webhook to pull request.

const PINNED = JSON.parse(
	readFileSync(new URL("../../agents/package.json", import.meta.url), "utf8"),
).dependencies["@anthropic-ai/claude-code"] as string;

/** The work the scripted model asks Claude Code's Bash tool for; the file says who ran it. */
const WORK = [
	`printf 'Hello from uid %s\\n' "$(id -u)" > GREETING.md`,
	"git add GREETING.md",
	"git commit -q -m 'feat: add a greeting'",
	`printf '{"prTitle":"feat: add a greeting","prBody":"- **What**: a greeting"}' > .lisa-manifest.json`,
].join(" && ");

describeWithImage("claude in the task's container", (img) => {
	let w: StackWorld;
	let claude: AnthropicDouble;
	beforeAll(async () => {
		claude = await startAnthropicDouble();
		w = await createStackWorld({
			configExtra: "models: [claude]\nlimits: {max_attempts: 1}",
			env: {
				LISA_LAUNCHER: "container",
				LISA_AGENT_UIDS: CONTAINER_AGENT_UIDS,
				LISA_IMAGE: img.image,
				...modelEnv("claude", claude),
			},
		});
	}, 120_000);
	afterAll(async () => {
		await w?.stop();
		await claude?.stop();
	});

	it("takes an issue to a pull request with the image's claude, as the agent's uid", async () => {
		claude.script(
			{ tools: [{ name: "Bash", input: { command: WORK, description: "Do the work" } }] },
			{ text: "Added GREETING.md, committed it and wrote the manifest." },
		);
		const runId = await w.startRun("Claude adds a greeting", "Add GREETING.md saying hello.");
		const run = await w.waitForRun(runId, undefined, 240_000);
		expect(run.error ?? "").toBe("");
		expect(run.status).toBe("succeeded");
		const step = run.steps[0];
		expect(step?.provider).toBe("claude");
		expect(step?.taskId).toMatch(/^lisa-[0-9a-f]{10}-/);

		// The pull request, from the commit the CLI's Bash tool made as a uid of the stack's pool.
		const branch = step?.branch ?? "";
		expect(await git(w.repo.path, "log", "-1", "--format=%s", branch)).toBe("feat: add a greeting");
		const uid = Number(
			/^Hello from uid (\d+)$/.exec(await git(w.repo.path, "show", `${branch}:GREETING.md`))?.[1],
		);
		const pool = w.stack?.agentUids;
		expect(uid).toBeGreaterThanOrEqual(pool?.first ?? 1);
		expect(uid).toBeLessThanOrEqual(pool?.last ?? 0);
		const pr = w.github.pulls("acme/api").find((p) => p.head.ref === branch);
		expect(pr?.title).toBe("feat: add a greeting");
		expect(pr?.html_url).toBe(run.prUrls[0]);

		// The model saw the pinned CLI, and the key the stack passed as a secret on every request: the
		// task's model broker, in the container, added it.
		expect(claude.turns.length).toBe(2);
		expect(claude.requests.every((r) => r.apiKey === claude.apiKey)).toBe(true);
		expect(claude.turns[0]?.headers["user-agent"]).toContain(PINNED);
		// The tokens are what the broker read in the answers; claude's own report is kept beside them.
		expect(step?.usage?.[0]).toMatchObject({
			attempt: 1,
			runs: [{ ok: true, usage: claude.billed }],
		});
		expect(step?.usage?.[0]?.runs[0]?.reported?.costUsd).toBeGreaterThan(0);
	}, 300_000);
});
