import { isTerminalRun, type RunStatus } from "../../src/domain/states";
import { planDirective } from "../doubles/agents/directives";
import type { DoubleIssue } from "../doubles/linear/server";
import { createStackWorld, type StackWorld } from "../support/stack";
import type { ApiRun } from "../support/world";

// The demo's runs (README › Quick start): the local stack against every double, two repositories
// (so each run plans first, docs/multi-repo.md › Multi-repo runs), and three issues the fake agent
// answers — one repo changed, two repos changed with a pull request each, and a step that fails.

/**
 * The agent's first and last lines as Claude Code prints them (the model it served, what it used
 * and cost), so the runs have a cost and tokens: the CLI's figure, above the tokens' list price.
 */
const spent = (usd: number, input: number, output: number) =>
	[
		`lisa-fake: stdout=${JSON.stringify({ type: "system", subtype: "init", claude_code_version: "2.0.50", model: "claude-sonnet-4-5-20250929" })}`,
		`lisa-fake: stdout=${JSON.stringify({ type: "result", subtype: "success", is_error: false, num_turns: 4, total_cost_usd: usd, usage: { input_tokens: input, output_tokens: output } })}`,
	].join("\n");

/** The issues the demo files, with the directives that script the fake agent (test/doubles/agents/fake-agent.mjs). */
const DEMO_ISSUES = [
	{
		title: "Add a health check endpoint",
		description: [
			"GET /health should answer 200 with {ok:true}.",
			planDirective([{ repo: "api", scope: "Add GET /health answering 200 {ok:true}", order: 1 }]),
			"lisa-fake@api: touch=src/routes/health.ts",
			spent(0.38, 21_000, 1_900),
		].join("\n"),
	},
	{
		title: "Export reports as CSV",
		description: [
			"Users want their reports as CSV, from an Export button.",
			planDirective([
				{ repo: "api", scope: "Add GET /reports/export returning CSV", order: 1 },
				{ repo: "web", scope: "Add the Export button that calls GET /reports/export", order: 2 },
			]),
			"lisa-fake@api: touch=src/routes/reports-export.ts",
			"lisa-fake@web: touch=src/components/ExportButton.tsx",
			spent(0.61, 34_000, 3_100),
		].join("\n"),
	},
	{
		title: "Migrate the billing tables",
		description: [
			"Move billing to the new schema.",
			planDirective([{ repo: "api", scope: "Write the billing migration", order: 1 }]),
			"lisa-fake@api: stderr=error: the migration needs a database the sandbox does not have",
			"lisa-fake@api: exit=3",
		].join("\n"),
	},
] as const;

export interface Demo {
	world: StackWorld;
	/** DEMO_ISSUES' issues and their runs as the API showed them once they ended (the tracker updated too). */
	runs: { issue: DoubleIssue; run: ApiRun }[];
	url: string;
	apiToken: string;
	readToken: string;
	/** The dashboard with a one-time sign-in code (docs/dashboard.md › Signing in from a link). */
	signInLink(): string;
}

/**
 * Starts the stack and the doubles, files the demo's issues through signed webhooks and waits for
 * their runs to end. The caller stops `world`; if this throws, everything it started is stopped.
 */
export async function startDemo(
	log: (line: string) => void,
	opts: { port?: number; signal?: AbortSignal } = {},
): Promise<Demo> {
	const world = await createStackWorld({
		moreRepos: ["web"],
		env: opts.port ? { PORT: String(opts.port) } : {},
	});
	try {
		if (!world.stack) throw new Error("the demo's stack did not start");
		log(`Lisa is up at ${world.stack.url}; the demo's files are in ${world.dir} until it stops`);
		const started: { issue: DoubleIssue; runId: string }[] = [];
		for (const { title, description } of DEMO_ISSUES) {
			const issue = world.issue(title, description);
			const res = await world.sendWebhook(world.createdWebhook(issue));
			const { runId } = (await res.json()) as { runId: string };
			log(`${issue.identifier} "${title}": POST /webhooks/linear → ${res.status}, run ${runId}`);
			started.push({ issue, runId });
		}
		const runs = await untilEnded(world, started, opts.signal);
		return {
			world,
			runs,
			url: world.stack.url,
			apiToken: world.stack.apiToken,
			readToken: world.stack.readToken,
			signInLink: world.stack.signInLink,
		};
	} catch (err) {
		await world.stop();
		throw err;
	}
}

const ended = (r: ApiRun) => isTerminalRun(r.status as RunStatus) && r.tracker?.done === true;

/** Polls the runs until each ended and updated its tracker; a signal stops the wait. */
async function untilEnded(
	world: StackWorld,
	started: { issue: DoubleIssue; runId: string }[],
	signal: AbortSignal | undefined,
): Promise<Demo["runs"]> {
	const deadline = Date.now() + 300_000;
	for (;;) {
		signal?.throwIfAborted();
		const runs = await Promise.all(
			started.map(async ({ issue, runId }) => ({
				issue,
				run: (await world.api<ApiRun>(`/api/runs/${runId}`)).body,
			})),
		);
		if (runs.every(({ run }) => run.status && ended(run))) return runs;
		if (Date.now() > deadline)
			throw new Error(
				`the demo's runs did not end within 5 minutes: ${runs.map(({ run }) => `${run.id} ${run.status}`).join(", ")}`,
			);
		await new Promise((r) => setTimeout(r, 250));
	}
}
