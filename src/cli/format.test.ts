import { describe, expect, it } from "vitest";
import type { RunAnswer, StepAnswer } from "../api/schemas";
import { NO_COST } from "../domain/cost";
import {
	changedLines,
	duration,
	epicLines,
	eventLine,
	logLines,
	overview,
	redraw,
	runDetail,
	runsTable,
	spendLine,
	table,
} from "./format";

const step = (
	s: Partial<StepAnswer> & Pick<StepAnswer, "index" | "repo" | "status" | "attempt">,
): StepAnswer => ({ cost: NO_COST, ...s });

const run = (over: Partial<RunAnswer> = {}): RunAnswer => ({
	id: "01RUN",
	runId: "01RUN",
	source: "linear",
	issueId: "uuid-1",
	issueKey: "ENG-7",
	title: "Fix it",
	trigger: "webhook",
	status: "running",
	steps: [],
	followUps: [],
	pendingFollowUps: [],
	createdAt: "2025-01-01T10:00:00.000Z",
	updatedAt: "2025-01-01T10:00:05.000Z",
	repos: [],
	provider: null,
	durationSeconds: 5,
	usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
	cost: NO_COST,
	limitUsd: 10,
	prUrls: [],
	links: {
		dashboard: "/runs/01RUN",
		events: "/api/runs/01RUN/events",
		stream: "/api/runs/01RUN/stream",
	},
	...over,
});

describe("formatting", () => {
	it("durations", () => {
		expect([0, 42, 65, 3600 + 240].map(duration)).toEqual(["0s", "42s", "1m 05s", "1h 04m"]);
	});

	it("aligns table columns, leaving the last one unpadded", () => {
		expect(table(["A", "LONG"], [["xyz", "1"]])).toEqual(["A    LONG", "xyz  1"]);
	});

	it("a runs table row: repos without the planning step, providers, duration, PRs", () => {
		const [, row] = runsTable(
			[
				run({
					status: "succeeded",
					finishedAt: "2025-01-01T10:01:05.000Z",
					prUrls: ["https://x/pr/1", "https://x/pr/2"],
					steps: [
						step({ index: 0, repo: "*", kind: "plan", status: "succeeded", attempt: 1 }),
						step({ index: 1, repo: "api", status: "succeeded", attempt: 1, provider: "claude" }),
						step({ index: 2, repo: "web", status: "succeeded", attempt: 2, provider: "gemini" }),
					],
				}),
			],
			new Date("2030-01-01"),
		);
		expect(row).toBe(
			"01RUN  succeeded  ENG-7  api,web  claude,gemini  1m 05s    https://x/pr/1 https://x/pr/2",
		);
	});

	it("a run's detail has no clock in it while the run is active", () => {
		const lines = runDetail(
			run({
				steps: [
					step({ index: 0, repo: "*", kind: "plan", status: "succeeded", attempt: 1 }),
					step({
						index: 1,
						repo: "api",
						status: "running",
						attempt: 2,
						agentState: "in_progress",
						provider: "claude",
						branch: "feat/eng-7-fix-it",
					}),
				],
			}),
			[
				{ id: "e1", at: "2025-01-01T10:00:01.000Z", type: "run.started", message: "started" },
				{
					id: "e2",
					at: "2025-01-01T10:00:02.000Z",
					type: "step.launched",
					step: 1,
					message: "step 1 (api) attempt 2 started as t-1",
				},
			],
		);
		expect(lines).toEqual([
			'run 01RUN  running  linear ENG-7 "Fix it"  (webhook, since 10:00:00)',
			"  cost $0.00: 0 tokens, 0 agent minutes  (model $0.00, compute $0.00; limit $10.00)",
			"  steps:",
			"    plan  -    succeeded  attempt 1  -              -         -",
			"    #1    api  running    attempt 2  in_progress    claude    -         feat/eng-7-fix-it",
			"  timeline:",
			"    10:00:01  run.started  started",
			// The step as every view numbers it (src/domain/step-label.js): the index 1 is step 1.
			"    10:00:02  step.launched #1  step 1 (api) attempt 2 started as t-1",
		]);
	});

	it("lisa logs numbers steps as every view does, and prints an agent's output without its escape codes", () => {
		const steps = [
			step({ index: 0, repo: "*", kind: "plan", status: "succeeded", attempt: 1 }),
			step({ index: 1, repo: "api", status: "running", attempt: 1 }),
		];
		const ESC = "\u001b";
		const output = {
			id: "e1",
			at: "2025-01-01T10:00:01.000Z",
			type: "agent.output",
			step: 1,
			// What an agent (steered by an issue's text) could print to take over a reader's terminal.
			message: `${ESC}[32mok${ESC}[0m\r\n${ESC}]52;c;cGF5bG9hZA==\u0007${ESC}[2Jdone\n`,
		};
		expect(logLines(output, steps)).toEqual(["10:00:01  agent.output #1  ok", "    done"]);
		expect(logLines({ ...output, step: 0, message: "planned" }, steps)).toEqual([
			"10:00:01  agent.output plan  planned",
		]);
		expect(eventLine(output, steps)).toBe("10:00:01  agent.output #1  ok done");
	});

	it("an epic's phases are named, not numbered", () => {
		const steps = [
			step({ index: 0, repo: "*", kind: "research", status: "succeeded", attempt: 1 }),
			step({ index: 1, repo: "*", kind: "epic_plan", status: "running", attempt: 1 }),
		];
		const event = { id: "e1", at: "2025-01-01T10:00:01.000Z", type: "agent.output", message: "ok" };
		expect(logLines({ ...event, step: 0 }, steps)).toEqual(["10:00:01  agent.output research  ok"]);
		expect(logLines({ ...event, step: 1 }, steps)).toEqual(["10:00:01  agent.output plan  ok"]);
	});

	it("a run's detail prints the tracker's title and the errors without their escape codes", () => {
		const ESC = "\u001b";
		// An issue's title is whoever filed it; an error quotes what an agent printed.
		const lines = runDetail(
			run({
				title: `Fix ${ESC}]0;pwned\u0007it${ESC}[2J`,
				status: "failed",
				error: `claude exited: ${ESC}[31mboom${ESC}[0m`,
				steps: [
					step({
						index: 0,
						repo: "api",
						status: "failed",
						attempt: 1,
						error: `${ESC}[1Aover\rwrite`,
					}),
				],
			}),
			[],
		);
		for (const control of [ESC, "\r", "\u0007"]) expect(lines.join("\n")).not.toContain(control);
		expect(lines[0]).toContain('ENG-7 "Fix it"');
		expect(lines).toContain("  error: claude exited: boom");
		expect(lines.find((l) => l.includes("#1"))).toMatch(/error: overwrite$/);
	});

	it("a step's line is followed by what its pull request changed and its title, on one line", () => {
		const lines = runDetail(
			run({
				status: "succeeded",
				finishedAt: "2025-01-01T10:05:00.000Z",
				steps: [
					step({
						index: 0,
						repo: "api",
						status: "succeeded",
						attempt: 1,
						prUrl: "https://x/pr/1",
						prTitle: "feat: add health check\u001b[2J",
						changes: {
							files: 3,
							additions: 120,
							deletions: 8,
							list: [{ path: "src/health.ts", additions: 100, deletions: 0 }],
						},
					}),
					step({ index: 1, repo: "web", status: "succeeded", attempt: 1, prTitle: "feat: web" }),
					step({ index: 2, repo: "docs", status: "failed", attempt: 1 }),
				],
			}),
			[],
		);
		const steps = lines.slice(lines.indexOf("  steps:") + 1);
		expect(steps[1]).toBe('        3 files +120 −8 · "feat: add health check [2J"');
		expect(steps[3]).toBe('        "feat: web"');
		expect(steps[4]).toMatch(/^ {4}#3 {2}docs/);
		expect(steps).toHaveLength(5);
	});

	it("a run's detail lists its follow-up rounds; a round names its parent", () => {
		const parent = runDetail(
			run({
				status: "succeeded",
				finishedAt: "2025-01-01T10:05:00.000Z",
				prUrls: ["https://github.com/acme/api/pull/3"],
				followUps: [
					{
						runId: "01ROUND1",
						trigger: "ci_failure",
						prUrl: "https://github.com/acme/api/pull/3",
						at: "2025-01-01T11:00:00.000Z",
						status: "succeeded",
					},
					{
						runId: "01ROUND2",
						trigger: "review",
						prUrl: "https://github.com/acme/api/pull/3",
						at: "2025-01-01T12:00:00.000Z",
						status: "running",
					},
				],
				followUpsStopped: {
					reason: "test still fails the same way",
					at: "2025-01-01T13:00:00.000Z",
				},
			}),
			[],
		);
		expect(parent).toEqual(
			expect.arrayContaining([
				"  rounds:",
				"    1. 01ROUND1  ci_failure  succeeded  2025-01-01T11:00:00",
				"    2. 01ROUND2  review  running  2025-01-01T12:00:00",
				"  CI rounds stopped: test still fails the same way",
			]),
		);
		const round = runDetail(
			run({
				trigger: "review",
				parentRunId: "01PARENT",
				round: { number: 2, prUrl: "https://github.com/acme/api/pull/3", branch: "feat/x" },
			}),
			[],
		);
		expect(round[0]).toContain("(review, since 10:00:00)");
		expect(round).toContain("  round: 2 of run 01PARENT");
	});

	it("a run's cost, per step; a run awaiting approval says how to approve it", () => {
		const attempt = {
			runs: [],
			total: {
				inputTokens: 300_000,
				outputTokens: 12_000,
				cacheReadTokens: 0,
				cacheWriteTokens: 0,
			},
		};
		const known = {
			...NO_COST,
			modelUsd: 4.9,
			computeUsd: 0.12,
			totalUsd: 5.02,
			knownUsd: 5.02,
			tokens: { input: 300_000, output: 12_000, cacheRead: 0, cacheWrite: 0 },
			agentSeconds: 540,
		};
		const unknown = {
			...known,
			modelUsd: null,
			totalUsd: null,
			knownUsd: 0.12,
			unknown: ["acme:x1: no price (set pricing in the config)"],
		};
		const lines = runDetail(
			run({
				status: "awaiting_approval",
				limitUsd: 5,
				cost: known,
				costWithFollowUps: unknown,
				approval: {
					requestedAt: "2025-01-01T10:09:00.000Z",
					spentUsd: 5.02,
					limitUsd: 5,
					proposedLimitUsd: 15.02,
				},
				approvals: [
					{
						by: "ada",
						via: "github",
						at: "2025-01-01T10:05:00.000Z",
						limitUsd: 5,
						spentUsd: 2.5,
						requestedAt: "2025-01-01T10:00:00.000Z",
						steps: [0],
					},
				],
				steps: [
					step({
						index: 0,
						repo: "api",
						status: "pending",
						attempt: 2,
						provider: "claude",
						usage: [{ attempt: 1, ...attempt, seconds: 540 }],
						cost: known,
					}),
				],
			}),
			[],
			{ apiUrl: "http://lisa.example:8787" },
		);
		expect(lines.slice(1)).toEqual([
			"  cost $5.02: 312k tokens, 9 agent minutes  (model $4.90, compute $0.12; limit $5.00)",
			"  with its follow-up rounds: cost unknown (at least $0.12; acme:x1: no price (set pricing in the config)): 312k tokens, 9 agent minutes",
			"  approved: limit $5.00 at $2.50 spent, by ada (github) 2025-01-01T10:05:00",
			"  awaiting approval since 2025-01-01T10:09:00: spent $5.02 of $5.00; approving raises the limit to $15.02 unless you give one",
			`  approve: curl -X POST -H "Authorization: Bearer $LISA_API_TOKEN" http://lisa.example:8787/api/runs/01RUN/approve [-d '{"limitUsd": 15.02}']`,
			"           or the dashboard (/runs/01RUN, admin token), or reply `/lisa continue` on its pull request or Linear session",
			"  steps:",
			"    #1  api  pending    attempt 2  -              claude    $5.02",
		]);
	});

	it("the overview", () => {
		const counts = {
			queued: 1,
			planning: 0,
			running: 0,
			awaiting_approval: 0,
			succeeded: 3,
			failed: 1,
			cancelled: 0,
		};
		const cost = { totalUsd: 41.2, knownUsd: 41.2, modelUsd: 40, computeUsd: 1.2, unknownRuns: 0 };
		const costs = { cost, costPerSucceededRun: 1.84, costPerMergedPr: 2.1 };
		expect(overview({ counts, total: 5, successRate: 0.75, ...costs }, [], new Date())).toEqual([
			"runs: 5 (queued 1 · planning 0 · running 0 · awaiting_approval 0 · succeeded 3 · failed 1 · cancelled 0)",
			"success rate: 75%",
			"cost: $41.20 · $1.84 a succeeded run · $2.10 a merged PR",
			"no active runs",
		]);
		expect(overview({ counts, total: 1, successRate: null, ...costs }, [], new Date())[1]).toBe(
			"success rate: no finished runs",
		);
		expect(
			spendLine({
				cost: { ...cost, totalUsd: null, modelUsd: null, knownUsd: 0.5, unknownRuns: 1 },
				costPerSucceededRun: 0.25,
				costPerMergedPr: null,
			}),
		).toBe("cost: at least $0.50 (1 run of unknown cost) · $0.25 a succeeded run");
		expect(
			spendLine({
				cost: { ...cost, totalUsd: null, modelUsd: null, knownUsd: 0, unknownRuns: 2 },
				costPerSucceededRun: null,
				costPerMergedPr: null,
			}),
		).toBe("cost: unknown (2 runs of unknown cost)");
	});

	it("--watch output: changed lines without a terminal, a redrawn frame with one", () => {
		expect(changedLines(["a", "b"], ["a", "c", "b"])).toEqual(["c"]);
		expect(redraw(0, ["abcdef"], 4)).toBe("abc…\n");
		expect(redraw(2, ["x"], 80)).toBe("\x1b[2F\x1b[Jx\n");
	});

	it("an epic's phase and a line per task; a task's run names its epic; others' text on one printable line", () => {
		const tasks = [
			{
				id: "01",
				title: "Add the model",
				repo: "api",
				dependsOn: [],
				status: "done" as const,
				issue: { key: "ENG-901" },
				prUrls: ["https://x/pr/1"],
			},
			{
				id: "02",
				title: "Show \u001b[2Jit\nthere",
				repo: "web",
				dependsOn: ["01"],
				status: "failed" as const,
				reason: "the agent\ngave up",
			},
		];
		const lines = runDetail(
			run({ kind: "epic", epic: { phase: "tasks", tasks, done: 1, total: 2 } }),
			[],
		);
		const at = lines.indexOf("  tasks:");
		expect(lines).toContain("  epic:  tasks, 1 of 2 tasks done");
		expect(lines.slice(at + 1, at + 4)).toEqual([
			"    ID  TITLE          REPO  AFTER  STATUS  ISSUE    PRS",
			"    01  Add the model  api   -      done    ENG-901  https://x/pr/1",
			"    02  Show it there  web   01     failed  -        (the agent gave up)",
		]);
		expect(lines.join("\n")).not.toContain("\u001b");
		expect(
			epicLines({
				epic: {
					phase: "needs_spec",
					questions: ["Which formats?"],
					tasks: [],
					done: 0,
					total: 0,
					continues: "01OLD",
				},
			}),
		).toEqual([
			"  epic:  needs_spec, 0 of 0 tasks done",
			"  continues: run 01OLD",
			"  questions:",
			"    - Which formats?",
		]);
		expect(epicLines({ epicTask: { runId: "01EPIC", taskId: "02" } })).toEqual([
			"  epic:  task 02 of run 01EPIC",
		]);
		expect(epicLines({})).toEqual([]);
	});
});
