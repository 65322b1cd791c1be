import { describe, expect, it } from "vitest";
import {
	epicPlanFiles,
	needsSpecText,
	type PlannedTask,
	planFilesRead,
	researchText,
	taskText,
} from "../../test/doubles/agents/directives";
import { eventMessageSchema, stepFinished } from "../queue/messages";
import { EPIC_LIMITS } from "./epic";
import { checkPlan, checkResearch, markdownSections, type PlanFiles } from "./epic-files";
import { UNPRINTABLE } from "./printable";
import { reportOutcome } from "./progress";

const repos = ["api", "web"];

const filesOf = planFilesRead;
const t = (id: string, repo: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title: `Task ${id} title`,
	repo,
	dependsOn,
});
const diamond = [
	t("04", "web", "02", "03"),
	t("03", "web", "01"),
	t("02", "api", "01"),
	t("01", "api"),
];
const missing = (v: { ok: boolean; missing?: string[] }) => (v.ok ? [] : (v.missing ?? []));

describe("markdownSections", () => {
	it("maps each level-2 heading, trimmed and lower-cased, to its trimmed body", () => {
		const s = markdownSections(
			"# Title\nintro\n##  Relevant Files ##\n\n- a.ts\n### Detail\nmore\n\n## Empty\n\n## relevant files\nagain",
		);
		expect([...s]).toEqual([
			["relevant files", "- a.ts\n### Detail\nmore"],
			["empty", ""],
		]);
	});

	it("ignores headings inside fenced code blocks", () => {
		const s = markdownSections(
			"## Steps\n\n```md\n## Not a heading\n~~~\n## Still not\n```\nafter\n~~~~\n## Nor this\n~~~~\n## Done When\nok",
		);
		expect([...s.keys()]).toEqual(["steps", "done when"]);
		expect(s.get("steps")).toContain("## Not a heading");
		expect(s.get("steps")).toContain("## Nor this");
	});
});

describe("checkResearch", () => {
	it("takes a research.md with every section", () => {
		const text = researchText();
		expect(checkResearch(text)).toEqual({ ok: true, value: { text } });
	});

	it("names every missing or empty section", () => {
		const text = researchText(["Existing Patterns", "Recommendations"]).replace("Handlers", "");
		expect(missing(checkResearch(`${text}\n## Dependencies\n`))).toEqual([
			"research.md has no `## Existing Patterns` section",
			"research.md has no `## Recommendations` section",
		]);
		expect(missing(checkResearch("## Overview\n\n## Relevant Files\nx"))).toContain(
			"research.md's `## Overview` section is empty",
		);
	});

	it("says when the file was not written, or is too big", () => {
		expect(checkResearch(undefined)).toEqual({
			ok: false,
			missing: ["research.md was not written"],
		});
		const big = researchText() + "x".repeat(EPIC_LIMITS.researchBytes);
		expect(missing(checkResearch(big))).toEqual([
			`research.md is ${Buffer.byteLength(big)} bytes, over the limit of ${EPIC_LIMITS.researchBytes} bytes: shorten it`,
		]);
	});

	it("takes a Needs Spec section's questions instead of the sections, bounded", () => {
		const text = needsSpecText(["Which formats?", "  Who may export?  "]);
		expect(checkResearch(text)).toEqual({
			ok: true,
			value: { text, needsSpec: ["Which formats?", "Who may export?"] },
		});
		const many = needsSpecText(
			Array.from({ length: 20 }, (_, i) => `Question ${i} \u001b[31m${"y".repeat(500)}`),
		);
		const v = checkResearch(many);
		const questions = v.ok ? (v.value.needsSpec ?? []) : [];
		expect(questions).toHaveLength(EPIC_LIMITS.questions);
		expect(questions.every((q) => q.length <= 300 && !q.includes("\u001b"))).toBe(true);
		expect(questions[0]?.startsWith("Question 0 yyy")).toBe(true);
	});

	it("does not take a Needs Spec without questions for an answer", () => {
		expect(missing(checkResearch("## Overview\nx\n## Needs Spec\nNothing to ask."))).toEqual([
			"research.md has no `## Relevant Files` section",
			"research.md has no `## Existing Patterns` section",
			"research.md has no `## Dependencies` section",
			"research.md has no `## Recommendations` section",
			"research.md's `## Needs Spec` section lists no questions: write each as a `- question` line",
		]);
		// Beside a full research it is harmless.
		const text = `${researchText()}\n\n## Needs Spec\n\nNone.`;
		expect(checkResearch(text)).toEqual({ ok: true, value: { text } });
	});
});

describe("checkPlan", () => {
	it("takes a diamond and orders the tasks after their dependencies", () => {
		const files = epicPlanFiles(diamond);
		const v = checkPlan(filesOf(files), repos, 15);
		expect(v.ok).toBe(true);
		if (!v.ok) return;
		expect(v.value.text).toBe(files["plan.md"]);
		expect(v.value.tasks.map((x) => [x.id, x.dependsOn])).toEqual([
			["01", []],
			["02", ["01"]],
			["03", ["01"]],
			["04", ["02", "03"]],
		]);
		expect(v.value.tasks[3]).toEqual({
			id: "04",
			title: "Task 04 title",
			repo: "web",
			goal: "Task 04 title.",
			doneWhen: "The tests pass.",
			dependsOn: ["02", "03"],
			file: "tasks/04-task-04-title.md",
			body: files["tasks/04-task-04-title.md"],
		});
	});

	it("names a cycle as a path", () => {
		const files = epicPlanFiles([t("01", "api", "03"), t("02", "api", "01"), t("03", "web", "02")]);
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			"the dependencies form a cycle: 01 → 03 → 02 → 01",
		]);
		const self = epicPlanFiles([t("01", "api"), t("02", "api", "02")]);
		expect(missing(checkPlan(filesOf(self), repos, 15))).toEqual([
			"the dependencies form a cycle: 02 → 02",
		]);
	});

	it("refuses a repository that is not configured, listing the configured ones", () => {
		const files = epicPlanFiles([t("01", "mobile"), t("02", "api", "01")]);
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			'tasks/01-task-01-title.md names repository "mobile", which is not configured: name one of api, web',
		]);
	});

	it("reads 01 and 1 as the same task", () => {
		const files = epicPlanFiles([t("01", "api"), t("02", "api", "1")]);
		files["plan.md"] = (files["plan.md"] as string).replace("- 02: [1]", "- 2: [01]");
		const v = checkPlan(filesOf(files), repos, 15);
		expect(v.ok && v.value.tasks.map((x) => [x.id, x.dependsOn])).toEqual([
			["01", []],
			["02", ["01"]],
		]);
		files["tasks/1-again.md"] = taskText(t("1", "api"));
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			"tasks/01-task-01-title.md and tasks/1-again.md are both task 1: give each task its own number",
		]);
	});

	it("collects every reason, each naming its file", () => {
		const files = epicPlanFiles([t("01", "api"), t("02", "web", "01"), t("03", "web", "02")]);
		const plan = (files["plan.md"] as string)
			.replace("## Overview\n\nThe work, split.", "## Overview\n")
			.replace("- 03: [02]", "- 03: [02, 07]");
		files["plan.md"] = plan;
		files["tasks/02-task-02-title.md"] = (files["tasks/02-task-02-title.md"] as string)
			.replace("## Done When\n\nThe tests pass.", "## Done When")
			.replace("- 01", "None");
		files["tasks/03-task-03-title.md"] = (files["tasks/03-task-03-title.md"] as string).replace(
			"# Task 3:",
			"# Task 4:",
		);
		files["tasks/../../etc/passwd.md"] = "x";
		files["tasks/Notes.txt"] = "x";
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			"plan.md's `## Overview` section is empty",
			"tasks/02-task-02-title.md's `## Done When` section is empty",
			"tasks/03-task-03-title.md is headed Task 4: the number must be the file name's (03)",
			'tasks/ holds "../../etc/passwd.md", which is not a task file name: name each `NN-slug.md` (e.g. 01-add-the-model.md)',
			'tasks/ holds "Notes.txt", which is not a task file name: name each `NN-slug.md` (e.g. 01-add-the-model.md)',
			"plan.md: task 03 depends on 07, which is not a task",
		]);
	});

	it("makes each task file's Dependencies agree with plan.md's", () => {
		const files = epicPlanFiles([t("01", "api"), t("02", "web", "01"), t("03", "web")]);
		files["tasks/03-task-03-title.md"] = taskText(t("03", "web", "01", "02"));
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			"tasks/03-task-03-title.md's Dependencies (01, 02) disagree with plan.md's (None): make them the same",
		]);
	});

	it("needs a plan.md line for every task, and only for tasks", () => {
		const files = epicPlanFiles([t("01", "api"), t("02", "web", "01")]);
		files["plan.md"] = (files["plan.md"] as string)
			.replace("- 01: []\n", "")
			.replace("- 02: [01]", "- 02: [01]\n- 05: []\n- 06: [x.*]\nnot a list line");
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			'plan.md: task 06 depends on "x.*", which is not a task id',
		]);
		files["plan.md"] = (files["plan.md"] as string).replace("- 06: [x.*]\n", "");
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			"plan.md's Dependencies has a line for 05, which has no task file",
			"plan.md's Dependencies has no line for task 01 (write `- 01: []` when it depends on nothing)",
		]);
		files["plan.md"] = (files["plan.md"] as string).replace("- 05: []", "- 05 after 01");
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			'plan.md\'s Dependencies has a line it cannot read: "- 05 after 01" (write `- 02: [01]`, or `- 01: []`)',
		]);
	});

	it("names a file it could not read once, for why, and still knows the task it holds", () => {
		const files = planFilesRead(epicPlanFiles([t("01", "api"), t("02", "api", "01")]));
		const unreadable = { error: "plan.md could not be read: it is a symbolic link" };
		expect(missing(checkPlan({ ...files, plan: unreadable }, repos, 15))).toEqual([
			unreadable.error,
		]);
		const tasks = (files.tasks as { file: string }[]).map((f) =>
			f.file.startsWith("tasks/02") ? { file: f.file, error: `${f.file} could not be read` } : f,
		);
		expect(missing(checkPlan({ ...files, tasks } as PlanFiles, repos, 15))).toEqual([
			"tasks/02-task-02-title.md could not be read",
		]);
		const unlisted = { error: "tasks/ is not a directory" };
		expect(missing(checkPlan({ ...files, tasks: unlisted }, repos, 15))).toEqual([unlisted.error]);
	});

	it("needs plan.md, its sections and at least one task", () => {
		expect(missing(checkPlan({ tasks: [] }, repos, 15))).toEqual([
			"plan.md was not written",
			"tasks/ has no task files: write one `tasks/NN-slug.md` per task",
		]);
		expect(missing(checkPlan({ plan: { text: "## Tasks\n- 01" }, tasks: [] }, repos, 15))).toEqual([
			"plan.md has no `## Overview` section",
			"plan.md has no `## Dependencies` section",
			"tasks/ has no task files: write one `tasks/NN-slug.md` per task",
		]);
	});

	it("bounds the number of tasks and the size of each file", () => {
		const three = epicPlanFiles([t("01", "api"), t("02", "api"), t("03", "api")]);
		expect(missing(checkPlan(filesOf(three), repos, 2))).toEqual([
			"tasks/ holds 3 task files, over the limit of 2: merge tasks",
		]);
		const files = epicPlanFiles([t("01", "api")]);
		files["tasks/01-task-01-title.md"] += "z".repeat(EPIC_LIMITS.taskBytes);
		files["plan.md"] += "z".repeat(EPIC_LIMITS.planBytes);
		expect(missing(checkPlan(filesOf(files), repos, 15))).toEqual([
			expect.stringMatching(/^plan\.md is \d+ bytes, over the limit of 8000 bytes: shorten it$/),
			expect.stringMatching(
				/^tasks\/01-task-01-title\.md is \d+ bytes, over the limit of 4000 bytes: shorten it$/,
			),
		]);
	});

	it("quotes the agent's words bounded, on one line, without control characters", () => {
		const files = epicPlanFiles([t("01", "api")]);
		files["tasks/01-task-01-title.md"] = taskText(
			t("01", `\u001b]0;pwn\u0007 (a+)+$\n${"r".repeat(200)}`, ""),
		);
		const [reason] = missing(checkPlan(filesOf(files), repos, 15));
		expect(reason).toMatch(
			/^tasks\/01-task-01-title\.md names repository ".{1,80}…", which is not configured/,
		);
		expect(reason).not.toMatch(UNPRINTABLE);
	});
});

describe("the checked phases in the step.finished message", () => {
	const RUN = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

	it("carries the largest research and plan the checks accept, through a stored report", () => {
		const research = checkResearch(
			needsSpecText(Array.from({ length: 12 }, () => "q".repeat(400))),
		);
		const tasks = Array.from({ length: EPIC_LIMITS.maxTasks }, (_, i) => {
			const id = String(i + 1).padStart(2, "0");
			return t(id, "web", ...(i ? [String(i).padStart(2, "0")] : []));
		});
		const plan = checkPlan(filesOf(epicPlanFiles(tasks)), repos, 99);
		if (!research.ok || !plan.ok) throw new Error("the checks refused the fixtures");
		const report = {
			attempt: 1,
			outcome: "succeeded" as const,
			research: research.value,
			epicPlan: plan.value,
			at: "2026-11-24T00:00:00.000Z",
		};
		const msg = eventMessageSchema.parse(stepFinished(reportOutcome(RUN, 0, report)));
		expect(msg).toMatchObject({ research: research.value, epicPlan: plan.value });
	});

	it("refuses a task whose file is not a task file's name", () => {
		const plan = checkPlan(filesOf(epicPlanFiles([t("01", "api")])), repos, 15);
		if (!plan.ok) throw new Error("the checks refused the fixture");
		const bad = { ...plan.value, tasks: [{ ...plan.value.tasks[0], file: "tasks/../x.md" }] };
		const msg = {
			...stepFinished(reportOutcome(RUN, 0, { attempt: 1, outcome: "succeeded", at: "x" })),
		};
		expect(eventMessageSchema.safeParse({ ...msg, epicPlan: plan.value }).success).toBe(true);
		expect(eventMessageSchema.safeParse({ ...msg, epicPlan: bad }).success).toBe(false);
	});
});
