import { runMarker, stripHtml } from "./comments";
import type { EpicState, EpicTaskState, EpicTaskStatus } from "./epic";
import type { DependencyReport } from "./epic-link";
import { oneLine } from "./redact";
import { defuseMentions } from "./round-comments";
import { prUrls, type Run, workSteps } from "./run";
import { isTerminalRun } from "./states";

// An epic's tasks as the pipeline sees them (docs/epics.md › Epics): what their sub-issues say,
// where each one is (from its run), and the one progress comment. Pure.

/** Carried in a sub-issue's body: finds it again after a crash between creating and recording it. */
export const taskMarker = (origin: string, taskId: string) =>
	`<!-- lisa:epic=${origin} task=${taskId} -->`;

const RESEARCH_EXCERPT = 2_000;

/** The sub-issue's body: the task file, where it belongs, what blocks it, and the marker. */
export function subIssueBody(
	epic: { key?: string; url?: string },
	state: EpicState,
	task: EpicTaskState,
	origin: string,
): string {
	const byId = new Map(state.tasks.map((t) => [t.id, t]));
	const blockers = task.dependsOn.map((id) => {
		const dep = byId.get(id);
		return dep?.issue?.key ?? dep?.issue?.url ?? `task ${id}`;
	});
	const relevant = relevantFiles(state.research?.text);
	// The agent's text (derived from the issue): no HTML (a forged marker), no pings.
	const clean = (text: string) => defuseMentions(stripHtml(text)).trim();
	return [
		clean(task.body),
		"",
		"---",
		`Part of ${epic.key ?? epic.url ?? "the epic"}${epic.url && epic.key ? ` (${epic.url})` : ""}.`,
		blockers.length
			? `Blocked by ${blockers.join(", ")}.`
			: "Blocked by nothing: it can start first.",
		...(relevant ? ["", "Relevant files (from the epic's research):", clean(relevant)] : []),
		"",
		taskMarker(origin, task.id),
	].join("\n");
}

/** research.md's `## Relevant Files` section, bounded. */
function relevantFiles(research: string | undefined): string | undefined {
	const match = research?.match(/^## Relevant Files[ \t]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m);
	const body = match?.[1]?.trim();
	return body ? body.slice(0, RESEARCH_EXCERPT) : undefined;
}

/**
 * Where a task is, from its run: `followMerge` (`source_config.merged` is set) makes a task done
 * only once every pull request of its run merged; otherwise its run's success is enough.
 */
export function taskProgress(
	task: EpicTaskState,
	run: Run | undefined,
	followMerge: boolean,
): Pick<EpicTaskState, "status" | "prUrls" | "reason"> {
	if (!task.issue) return { status: "planned" };
	if (!task.runId) return { status: "waiting" };
	// Requested, not created yet: the intake creates it.
	if (!run || !isTerminalRun(run.status)) return { status: "running" };
	const urls = prUrls(run);
	if (run.status === "cancelled")
		return {
			status: "cancelled",
			prUrls: urls,
			reason: (run.error ?? "its run was cancelled").slice(0, 1_000),
		};
	if (run.status !== "succeeded")
		return {
			status: "failed",
			prUrls: urls,
			reason: (run.error ?? `its run ${run.status}`).slice(0, 1_000),
		};
	const closed = run.closedPullRequests ?? [];
	const unmerged = closed.find((c) => !c.merged && urls.includes(c.url));
	if (unmerged)
		return {
			status: "failed",
			prUrls: urls,
			reason: `${unmerged.url} was closed without merging`,
		};
	if (!followMerge) return { status: "done", prUrls: urls };
	const merged = urls.every((u) => closed.some((c) => c.merged && c.url === u));
	return { status: merged ? "done" : "in_review", prUrls: urls };
}

/** What a task's run is told of a dependency: its pull requests, branches and files (bounded). */
export function dependencyReport(task: EpicTaskState, run: Run | undefined): DependencyReport {
	const steps = run ? workSteps(run) : [];
	return {
		id: task.id,
		title: task.title.slice(0, 300),
		repo: task.repo,
		issueKey: task.issue?.key,
		prs: steps
			.filter((s) => s.prUrl)
			.slice(0, 10)
			.map((s) => ({ url: s.prUrl as string, branch: s.branch, title: s.prTitle })),
		files: steps
			.flatMap((s) => s.changes?.list.map((f) => f.path) ?? [])
			.slice(0, 30)
			.map((p) => p.slice(0, 300)),
	};
}

const ICON: Record<EpicTaskStatus, string> = {
	planned: "·",
	waiting: "⏳",
	running: "🔄",
	in_review: "👀",
	done: "✅",
	failed: "❌",
	cancelled: "⏹️",
	blocked: "⛔",
};

const SAID: Record<EpicTaskStatus, string> = {
	planned: "planned",
	waiting: "waiting",
	running: "in progress",
	in_review: "in review (its pull requests wait to be merged)",
	done: "done",
	failed: "failed",
	cancelled: "cancelled",
	blocked: "blocked",
};

/** The epic's one progress comment, edited in place as its tasks move. */
export function epicProgressComment(run: Run, runUrl: string): string {
	const tasks = run.epic?.tasks ?? [];
	const done = tasks.filter((t) => t.status === "done").length;
	const lines = tasks.map((t) => {
		const where = t.issue?.key ?? t.issue?.url;
		const waits =
			t.status === "waiting" && t.dependsOn.length ? ` for ${t.dependsOn.join(", ")}` : "";
		const why =
			t.reason && (t.status === "failed" || t.status === "cancelled" || t.status === "blocked")
				? `: ${oneLineTitle(t.reason, 300)}`
				: "";
		const prs = t.prUrls?.length ? ` · ${t.prUrls.join(" ")}` : "";
		return `- ${ICON[t.status]} ${t.id} ${oneLineTitle(t.title)} (${t.repo}${where ? `, ${where}` : ""}): ${SAID[t.status]}${waits}${why}${prs}`;
	});
	const count = `${done} of ${tasks.length} tasks done`;
	const headline =
		run.status === "succeeded"
			? `Lisa resolved this epic: ${count}.`
			: run.status === "failed"
				? `Lisa's epic stopped (${count}): ${oneLineTitle(run.error ?? "a task failed", 1_000)}. Continue it with \`npx lisa plan --continue ${run.runId}\` once the cause is fixed.`
				: run.status === "cancelled"
					? `Lisa's epic was cancelled (${count}): ${oneLineTitle(run.error ?? "stopped", 300)}.`
					: `Lisa is working through this epic's plan: ${count}.`;
	return [headline, "", ...lines, "", `Run: ${runUrl}`, runMarker(run.runId)].join("\n");
}

const oneLineTitle = (title: string, max = 120) => oneLine(defuseMentions(stripHtml(title)), max);

/** Posted instead of a plan when the research found the description not enough to plan. */
export function needsSpecComment(
	run: Run,
	questions: string[],
	label: string,
	runUrl: string,
): string {
	return [
		"Lisa could not plan this epic yet: the description leaves these questions open.",
		"",
		...questions.map((q) => `- ${oneLineTitle(q, 300)}`),
		"",
		`Answer them in the description, remove the \`${label}\` label, and label the issue for Lisa again (or retry the run).`,
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

/** Why an epic failed: its failed (or cancelled) tasks with their reasons, and the tasks they block. */
export function epicFailure(tasks: readonly EpicTaskState[]): string {
	const failed = tasks.filter((t) => t.status === "failed" || t.status === "cancelled");
	const blocked = tasks.filter((t) => t.status === "blocked").map((t) => t.id);
	return [
		...failed.map((t) => `task ${t.id} ${t.status}: ${t.reason ?? `its run ${t.status}`}`),
		...(blocked.length ? [`blocked, so never started: ${blocked.join(", ")}`] : []),
	]
		.join("; ")
		.slice(0, 2_000);
}
