import * as z from "zod";

// What a task's run knows of its epic (docs/epics.md › Epics): where to report, and what the tasks
// it depends on did — only those, as the task context of an epic's plan carries only its
// dependencies.

const text = (max: number) => z.string().max(max);

const dependencyReportSchema = z.object({
	id: text(16),
	title: text(300),
	repo: text(200),
	issueKey: text(200).optional(),
	/** The pull requests its run opened, with their branches and titles. */
	prs: z
		.array(z.object({ url: text(2000), branch: text(300).optional(), title: text(300).optional() }))
		.max(10),
	/** The files its pull requests changed (bounded). */
	files: z.array(text(300)).max(30).optional(),
});
export type DependencyReport = z.infer<typeof dependencyReportSchema>;

export const epicTaskLinkSchema = z.object({
	/** The epic's run. */
	runId: z.string().max(64),
	taskId: text(16),
	/** The one repository the task changes. */
	repo: text(200),
	dependencies: z.array(dependencyReportSchema).max(15),
});
export type EpicTaskLink = z.infer<typeof epicTaskLinkSchema>;
