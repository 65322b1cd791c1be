import type { PlanFiles } from "../../../src/domain/epic-files";
import type { PlanStep } from "../../../src/domain/plan";

// Directives for the fake agent (fake-agent.mjs), as a test writes them into an issue's description.

/** The plan the fake agent answers a planning prompt with. */
export const planDirective = (steps: PlanStep[]) => `lisa-fake: plan=${JSON.stringify({ steps })}`;

/** Which attempt of an epic phase a directive answers: every one, the first, or the second. */
export type EpicAttempt = "first" | "second";

const suffix = (which?: EpicAttempt) => (which ? `-${which}` : "");

/** A research.md with every section (docs/epics.md › Epics); `omit` leaves sections out. */
export const researchText = (omit: string[] = []) =>
	[
		"# Research",
		...[
			["Overview", "The issue asks for an export of the reports."],
			["Relevant Files", "- src/reports.ts"],
			["Existing Patterns", "Handlers validate with zod."],
			["Dependencies", "None new."],
			["Recommendations", "Add the endpoint first, then the button."],
		]
			.filter(([name]) => !omit.includes(name as string))
			.map(([name, body]) => `\n## ${name}\n\n${body}`),
	].join("\n");

/** The research the fake agent writes as research.md (for one attempt, or every one). */
export const researchDirective = (text: string, which?: EpicAttempt) =>
	`lisa-fake: research${suffix(which)}=${JSON.stringify(text)}`;

/** A research.md concluding that the issue cannot be planned, with the questions to ask. */
export const needsSpecText = (questions: string[]) =>
	`# Research\n\n## Overview\n\nUnclear.\n\n## Needs Spec\n\n${questions.map((q) => `- ${q}`).join("\n")}\n`;

export const needsSpecResearch = (questions: string[], which?: EpicAttempt) =>
	researchDirective(needsSpecText(questions), which);

/** A task of an epic plan, in one line: `{ id: "02", title: "UI", repo: "web", dependsOn: ["01"] }`. */
export interface PlannedTask {
	id: string;
	title: string;
	repo: string;
	dependsOn: string[];
}

/** A well-formed task file. */
export const taskText = (t: PlannedTask) =>
	[
		`# Task ${Number(t.id)}: ${t.title}`,
		`## Goal\n\n${t.title}.`,
		`## Repository\n\n${t.repo}`,
		`## Files\n\n- src/${t.id}.ts`,
		`## Steps\n\n1. Write it.\n2. Test it.`,
		`## Done When\n\nThe tests pass.`,
		`## Dependencies\n\n${t.dependsOn.length ? t.dependsOn.map((d) => `- ${d}`).join("\n") : "None"}`,
	].join("\n\n");

/** plan.md and one file per task, well-formed (a cycle among the tasks is the caller's to write). */
export function epicPlanFiles(tasks: PlannedTask[]): Record<string, string> {
	const files: Record<string, string> = {
		"plan.md": [
			"# Plan",
			"## Overview\n\nThe work, split.",
			`## Tasks\n\n${tasks.map((t) => `- ${t.id}: ${t.title}`).join("\n")}`,
			`## Dependencies\n\n${tasks.map((t) => `- ${t.id}: [${t.dependsOn.join(", ")}]`).join("\n")}`,
			"## Risks\n\nNone.",
		].join("\n\n"),
	};
	for (const t of tasks) files[`tasks/${t.id}-${slug(t.title)}.md`] = taskText(t);
	return files;
}

/** The plan's files as the plan step reads them from its workspace. */
export const planFilesRead = (files: Record<string, string>): PlanFiles => ({
	...(files["plan.md"] === undefined ? {} : { plan: { text: files["plan.md"] } }),
	tasks: Object.entries(files)
		.filter(([name]) => name.startsWith("tasks/"))
		.map(([file, text]) => ({ file, text })),
});

/** The plan's files with a directive for the fake agent in one task's Steps (its sub-issue's run reads it). */
export const withTaskDirective = (
	files: Record<string, string>,
	taskId: string,
	directive: string,
) =>
	Object.fromEntries(
		Object.entries(files).map(([file, text]) => [
			file,
			file.startsWith(`tasks/${taskId}-`)
				? text.replace("1. Write it.", `1. Write it.\n${directive}`)
				: text,
		]),
	);

const slug = (title: string) =>
	title
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, "-")
		.replace(/^-|-$/g, "");

/** The plan the fake agent writes: tasks described in one line each, or the files as they are. */
export const epicPlanDirective = (
	plan: PlannedTask[] | Record<string, string>,
	which?: EpicAttempt,
) =>
	`lisa-fake: epic-plan${suffix(which)}=${JSON.stringify(Array.isArray(plan) ? epicPlanFiles(plan) : plan)}`;
