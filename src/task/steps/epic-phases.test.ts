import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
	epicPlanDirective,
	epicPlanFiles,
	needsSpecResearch,
	type PlannedTask,
	researchDirective,
	researchText,
} from "../../../test/doubles/agents/directives";
import { branches, git } from "../../../test/support/git";
import { createTaskWorld, type TaskWorld } from "../../../test/support/task";
import { ANTHROPIC_KEY } from "../../../test/support/world";

// An epic's research and plan phases through the real task code: two bare repos checked out
// read-only for the fake agent, its files read safely and checked, retried with what is missing.

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld({}, { moreRepos: ["web"] });
});
afterAll(() => w.stop());

const research = (description: string) =>
	w.newRun({ title: "Export reports", description }, "", { epic: "research" });
const plan = (description: string, text = researchText()) =>
	w.newRun({ title: "Export reports", description }, "", { epic: { research: text } });
const task = (id: string, repo: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title: `Task ${id}`,
	repo,
	dependsOn,
});
const diamond = [
	task("01", "api"),
	task("02", "api", "01"),
	task("03", "web", "01"),
	task("04", "web", "02", "03"),
];

describe("the research phase", () => {
	it("researches over read-only checkouts of every repo and reports research.md", async () => {
		const runId = await research("lisa-fake: plan-scribble");
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "succeeded", provider: "claude" });
		expect(report?.research?.needsSpec).toBeUndefined();
		expect(report?.research?.text).toContain(
			"## Relevant Files\n\n- api/README.md\n- web/README.md",
		);
		expect((await w.run(runId)).steps[0]?.report?.research).toEqual(report?.research);

		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(1);
		const dir = path.join(w.workspace(runId), "plan");
		expect(calls[0]).toMatchObject({ target: "research", cwd: dir });
		expect(calls[0]?.prompt).toContain(`write the epic research file \`${dir}/research.md\``);
		for (const name of ["api", "web"]) {
			expect(calls[0]?.checkouts?.[name]).toEqual({
				head: await git(w.repos[name]?.path as string, "rev-parse", "main"),
				status: "",
			});
			expect(await branches(w.repos[name]?.path as string)).toEqual(["main"]);
		}
		const events = await w.events(runId);
		expect(events.find((e) => e.type === "plan.discarded")?.message).toBe(
			"the research agent changed api, web; the changes were discarded (research does not implement)",
		);
		expect(events.find((e) => e.type === "epic.research_checked")?.message).toMatch(
			/^research\.md accepted \(\d+ bytes\) \(attempt 1\)$/,
		);
	});

	it("asks again with the missing sections, and takes the second attempt", async () => {
		const runId = await research(researchDirective(researchText(["Existing Patterns"]), "first"));
		const report = await w.runTask(runId);
		expect(report?.outcome).toBe("succeeded");
		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(2);
		expect(calls[1]?.prompt.startsWith("[RETRY - MUST COMPLETE]\n")).toBe(true);
		expect(calls[1]?.prompt).toContain(
			"```untrusted-problems\n- research.md has no `## Existing Patterns` section\n```",
		);
		const incomplete = (await w.events(runId)).filter((e) => e.type === "epic.phase_incomplete");
		expect(incomplete.map((e) => e.message)).toEqual([
			"the research is incomplete (attempt 1): research.md has no `## Existing Patterns` section; asking the agent again with these problems",
		]);
	});

	it("fails after three incomplete attempts, naming what is missing", async () => {
		const runId = await research(
			[
				researchDirective(researchText(["Overview"]), "first"),
				researchDirective(researchText(["Dependencies"]), "second"),
				researchDirective(researchText(["Recommendations", "Dependencies"])),
			].join("\n"),
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed", transient: false });
		expect(report?.error).toBe(
			"the research phase was incomplete after 3 attempts: research.md has no `## Dependencies` section; research.md has no `## Recommendations` section",
		);
		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.prompt.split("\n")[0])).toEqual([
			expect.stringMatching(/^You are researching/),
			"[RETRY - MUST COMPLETE]",
			"[FINAL ATTEMPT]",
		]);
		expect(calls[2]?.prompt).toContain("- research.md has no `## Dependencies` section");
		expect(await w.store.guardrails("*")).toEqual([]);
	});

	it("takes a research that needs a spec, with its questions, secrets redacted", async () => {
		const runId = await research(
			needsSpecResearch(["Which formats?", `Is ${ANTHROPIC_KEY} the key to use?`]),
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({
			outcome: "succeeded",
			research: { needsSpec: ["Which formats?", "Is [redacted] the key to use?"] },
		});
		expect(report?.research?.text).not.toContain(ANTHROPIC_KEY);
		expect(await w.agents.callsOf(runId)).toHaveLength(1);
	});

	it("refuses a 10 MB research.md without reading it", async () => {
		const runId = await research("lisa-fake: research-pad=10000000");
		const report = await w.runTask(runId);
		expect(report?.error).toBe(
			"the research phase was incomplete after 3 attempts: research.md could not be read: it is larger than 24000 bytes",
		);
	});
});

describe("the plan phase", () => {
	it("plans a diamond from the research: four tasks in dependency order", async () => {
		const runId = await plan(
			epicPlanDirective(diamond),
			`${researchText()}\n\nUse \`\`\`\` fences.`,
		);
		const report = await w.runTask(runId);
		expect(report?.outcome).toBe("succeeded");
		expect(report?.epicPlan?.tasks.map((t) => [t.id, t.repo, t.dependsOn])).toEqual([
			["01", "api", []],
			["02", "api", ["01"]],
			["03", "web", ["01"]],
			["04", "web", ["02", "03"]],
		]);
		const files = epicPlanFiles(diamond);
		expect(report?.epicPlan?.text).toBe(files["plan.md"]);
		expect(report?.epicPlan?.tasks[3]?.body).toBe(files["tasks/04-task-04.md"]);
		expect((await w.run(runId)).steps[1]?.report?.epicPlan).toEqual(report?.epicPlan);

		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(1);
		const dir = path.join(w.workspace(runId), "plan");
		expect(calls[0]).toMatchObject({ target: "epic_plan", cwd: dir });
		expect(calls[0]?.prompt).toContain(`write the epic plan into \`${dir}\``);
		expect(calls[0]?.prompt).toContain("`````untrusted-research\n# Research\n");
		expect((await w.events(runId)).find((e) => e.type === "epic.plan_checked")?.message).toBe(
			"plan accepted: 01 api; 02 api after 01; 03 web after 01; 04 web after 02, 03 (attempt 1)",
		);
	});

	it("asks again when a task names a repository that is not configured", async () => {
		const runId = await plan(
			[
				epicPlanDirective([task("01", "mobile"), task("02", "web", "01")], "first"),
				epicPlanDirective([task("01", "api"), task("02", "web", "01")]),
			].join("\n"),
		);
		const report = await w.runTask(runId);
		expect(report?.epicPlan?.tasks.map((t) => t.repo)).toEqual(["api", "web"]);
		const calls = await w.agents.callsOf(runId);
		expect(calls[1]?.prompt).toContain(
			'- tasks/01-task-01.md names repository "mobile", which is not configured: name one of api, web',
		);
	});

	it("fails a plan whose dependencies form a cycle, listing it in every retry", async () => {
		const runId = await plan(
			epicPlanDirective([
				task("01", "api", "03"),
				task("02", "api", "01"),
				task("03", "web", "02"),
			]),
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed", transient: false });
		expect(report?.error).toBe(
			"the plan phase was incomplete after 3 attempts: the dependencies form a cycle: 01 → 03 → 02 → 01",
		);
		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(3);
		expect(calls[1]?.prompt).toContain("- the dependencies form a cycle: 01 → 03 → 02 → 01");
		expect(calls[2]?.prompt.startsWith("[FINAL ATTEMPT]\n")).toBe(true);
	});

	// An unread file is named once, for why: not also as missing.
	it("never follows a link in tasks/ nor reads a file written outside it", async () => {
		const files = epicPlanFiles([task("01", "api"), task("02", "web", "01"), task("03", "web")]);
		const escaped = files["tasks/03-task-03.md"] as string;
		delete files["tasks/03-task-03.md"];
		files["tasks/../03-task-03.md"] = escaped;
		const runId = await plan(
			[
				epicPlanDirective(files),
				`lisa-fake: epic-link=${JSON.stringify({ "tasks/02-task-02.md": "/etc/passwd" })}`,
			].join("\n"),
		);
		const report = await w.runTask(runId);
		expect(report?.outcome).toBe("failed");
		expect(report?.error).toBe(
			"the plan phase was incomplete after 3 attempts: tasks/02-task-02.md could not be read: it is a symbolic link, which is not followed; plan.md's Dependencies has a line for 03, which has no task file",
		);
		expect(report?.error).not.toContain("root:");
	});

	it("refuses tasks/ when it is a link", async () => {
		const files = epicPlanFiles([task("01", "api")]);
		delete files["tasks/01-task-01.md"];
		const runId = await plan(
			[epicPlanDirective(files), `lisa-fake: epic-link=${JSON.stringify({ tasks: "/etc" })}`].join(
				"\n",
			),
		);
		const report = await w.runTask(runId);
		expect(report?.error).toMatch(
			/^the plan phase was incomplete after 3 attempts: tasks\/ is not a directory \(a link is not followed\)$/,
		);
	});

	it("stops reading tasks/ past its bound", async () => {
		const files = epicPlanFiles([task("01", "api")]);
		for (let i = 0; i < 40; i++) files[`tasks/junk-${i}.txt`] = "x";
		const runId = await plan(epicPlanDirective(files));
		const report = await w.runTask(runId);
		expect(report?.error).toBe(
			"the plan phase was incomplete after 3 attempts: tasks/ holds more than 30 entries: write one file per task",
		);
	});

	it("fails at once when the run has no research to plan from", async () => {
		const runId = await w.newRun({ title: "No research" }, "", { epic: "research" });
		const run = await w.run(runId);
		await w.store.updateRun(run, { steps: { 0: { kind: "epic_plan" } } }, new Date().toISOString());
		const report = await w.runTask(runId);
		expect(report).toMatchObject({
			outcome: "failed",
			transient: false,
			error: "the epic has no research to plan from: its research step has not succeeded",
		});
		expect(await w.agents.callsOf(runId)).toEqual([]);
	});
});
