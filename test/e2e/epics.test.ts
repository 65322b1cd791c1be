import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EpicAnswer } from "../../src/api/schemas";
import {
	epicPlanDirective,
	epicPlanFiles,
	needsSpecResearch,
	type PlannedTask,
	withTaskDirective,
} from "../doubles/agents/directives";
import { createStackWorld, type StackWorld } from "../support/stack";

// Epics on the local stack with Linear (docs/epics.md › Epics): an issue labelled `lisa-epic` is
// researched and planned by the fake agent in the task, its plan becomes sub-issues, and the
// sub-issues are resolved as runs of their own, in dependency order, by the same agent.

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ moreRepos: ["web"], configExtra: "limits: {max_attempts: 1}" });
});
afterAll(() => w.stop());

type Event = { type: string; message: string; data?: Record<string, unknown> };
// What a run may take on a loaded machine: each test waits as long as its runs may.
const WAIT = 240_000;
const t = (id: string, title: string, repo: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title,
	repo,
	dependsOn,
});
/** A; B and C after A; D after both. */
const DIAMOND = [
	t("01", "Add the report model", "api"),
	t("02", "Serve reports", "api", "01"),
	t("03", "Show reports", "web", "01"),
	t("04", "Document reports", "web", "02", "03"),
];

async function startEpic(title: string, description: string) {
	const issue = w.issue(title, description, ["lisa-epic"]);
	const res = await w.sendWebhook(w.createdWebhook(issue));
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	return { issue, runId };
}
const events = async (runId: string) =>
	(await w.api<{ events: Event[] }>(`/api/runs/${runId}/events?limit=500`)).body.events;
const subIssues = (epicId: string) => w.linear.state.issues.filter((i) => i.parentId === epicId);
const progressComments = (issueId: string) =>
	w.linear.state.comments.filter((c) => c.issueId === issueId && c.body.includes("tasks done"));

describe("epics with Linear", { timeout: WAIT }, () => {
	it("researches, plans a diamond into sub-issues with blocks relations, and resolves them in order", async () => {
		const { issue, runId } = await startEpic("Reports, end to end", epicPlanDirective(DIAMOND));
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("succeeded");
		expect(run.steps.map((s) => [s.kind, s.status])).toEqual([
			["research", "succeeded"],
			["epic_plan", "succeeded"],
		]);

		// Each phase ran in a fresh agent context over the checkouts, not implementing.
		const phases = await w.agents.callsOf(runId);
		expect(phases.map((c) => c.target)).toEqual(["research", "epic_plan"]);
		expect(phases[1]?.prompt).toContain("## Relevant Files");

		const subs = subIssues(issue.id);
		expect(subs.map((s) => s.title).sort()).toEqual(DIAMOND.map((d) => d.title).sort());
		const title = (id: string) => subs.find((s) => s.id === id)?.title;
		const blocks = w.linear.state.relations
			.filter((r) => r.type === "blocks" && title(r.issueId))
			.map((r) => `${title(r.issueId)} → ${title(r.relatedIssueId)}`)
			.sort();
		expect(blocks).toEqual([
			"Add the report model → Serve reports",
			"Add the report model → Show reports",
			"Serve reports → Document reports",
			"Show reports → Document reports",
		]);

		// Every task ran as its own run, opened its PR, and its sub-issue went to review.
		const epic = (await w.api<EpicAnswer>(`/api/epics/${runId}`)).body;
		expect(epic.phase).toBe("done");
		expect(epic.tasks.map((x) => [x.id, x.status])).toEqual([
			["01", "done"],
			["02", "done"],
			["03", "done"],
			["04", "done"],
		]);
		for (const task of epic.tasks) {
			const child = await w.waitForRun(task.runId as string, undefined, WAIT);
			expect(child.status).toBe("succeeded");
			expect(child.prUrls).toHaveLength(1);
		}
		for (const sub of subs) expect(w.linear.stateName(sub.id)).toBe("In Review");

		// Dependency order: 02 and 03 started together once 01 was done, 04 once both were.
		const timeline = (await events(runId)).filter((e) => e.type.startsWith("epic.task_"));
		const at = (type: string, id: string, status?: string) =>
			timeline.findIndex(
				(e) => e.type === type && e.data?.taskId === id && (!status || e.data?.status === status),
			);
		const started = (id: string) => at("epic.task_started", id);
		const done = (id: string) => at("epic.task_status", id, "done");
		expect(done("01")).toBeLessThan(started("02"));
		expect(done("01")).toBeLessThan(started("03"));
		expect(started("02")).toBeLessThan(Math.min(done("02"), done("03")));
		expect(started("03")).toBeLessThan(Math.min(done("02"), done("03")));
		expect(Math.max(done("02"), done("03"))).toBeLessThan(started("04"));

		// Task 04's agent was told what 02 and 03 did, and nothing of 01.
		const d = epic.tasks.find((x) => x.id === "04")?.runId as string;
		const [dCall] = await w.agents.callsOf(d);
		expect(dCall?.prompt).toContain("## Tasks this one builds on");
		expect(dCall?.prompt).toContain('Task 02 "Serve reports"');
		expect(dCall?.prompt).toContain('Task 03 "Show reports"');
		expect(dCall?.prompt).not.toContain('Task 01 "Add the report model"');

		// One progress comment on the epic, edited to its end.
		const progress = progressComments(issue.id);
		expect(progress).toHaveLength(1);
		expect(progress[0]?.body).toMatch(/^Lisa resolved this epic: 4 of 4 tasks done\./);
		expect(w.linear.stateName(issue.id)).toBe("In Review");
	});

	it("retries a plan with a cycle with [RETRY - MUST COMPLETE] and the cycle, then [FINAL ATTEMPT], then fails with the reasons", async () => {
		const cycle = epicPlanFiles([t("01", "One", "api", "02"), t("02", "Two", "web", "01")]);
		const { issue, runId } = await startEpic("Circular", epicPlanDirective(cycle));
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		expect(run.error).toContain("the dependencies form a cycle: 01 → 02 → 01");
		const prompts = (await w.agents.callsOf(runId))
			.filter((c) => c.target === "epic_plan")
			.map((c) => c.prompt);
		expect(prompts).toHaveLength(3);
		expect(prompts[0]).not.toContain("[RETRY - MUST COMPLETE]");
		expect(prompts[1]?.startsWith("[RETRY - MUST COMPLETE]")).toBe(true);
		expect(prompts[1]).toContain("the dependencies form a cycle: 01 → 02 → 01");
		expect(prompts[2]?.startsWith("[FINAL ATTEMPT]")).toBe(true);
		expect(subIssues(issue.id)).toEqual([]);
		const failed = w.linear.state.comments.filter((c) => c.issueId === issue.id).at(-1);
		expect(failed?.body).toContain("the dependencies form a cycle: 01 → 02 → 01");
	});

	it("labels a vague epic needs-spec and asks its questions, creating no sub-issue", async () => {
		const questions = ["Which reports?", "Which formats: CSV, PDF?"];
		const { issue, runId } = await startEpic("Make reports better", needsSpecResearch(questions));
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		expect(run.steps.map((s) => s.kind)).toEqual(["research"]);
		expect(w.linear.labelNames(issue.id)).toContain("needs-spec");
		const asked = w.linear.state.comments.find(
			(c) => c.issueId === issue.id && c.body.startsWith("Lisa could not plan this epic yet"),
		);
		expect(asked?.body).toContain("- Which reports?\n- Which formats: CSV, PDF?");
		expect(subIssues(issue.id)).toEqual([]);
		expect((await w.api<EpicAnswer>(`/api/epics/${runId}`)).body.phase).toBe("needs_spec");
	});

	it("stops at a failing task: its dependents never start, and the epic says why", async () => {
		const files = epicPlanFiles([t("01", "Break", "api"), t("02", "After", "web", "01")]);
		// Task 01's agent fails: the directive is in its sub-issue (the task file's Steps).
		const broken = withTaskDirective(files, "01", "lisa-fake: exit=3");
		const { issue, runId } = await startEpic("Fragile", epicPlanDirective(broken));
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		expect(run.error).toMatch(/^task 01 failed: .+; blocked, so never started: 02$/);
		const epic = (await w.api<EpicAnswer>(`/api/epics/${runId}`)).body;
		expect(epic.tasks.map((x) => [x.id, x.status])).toEqual([
			["01", "failed"],
			["02", "blocked"],
		]);
		expect(epic.tasks[1]?.runId).toBeUndefined();
		const progress = progressComments(issue.id);
		expect(progress).toHaveLength(1);
		expect(progress[0]?.body).toContain("Lisa's epic stopped (0 of 2 tasks done): task 01 failed");
		expect(progress[0]?.body).toContain("npx lisa plan --continue");
	});
});
