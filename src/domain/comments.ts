import { costLine, runCost } from "./cost";
import type { Plan } from "./plan";
import { oneLine } from "./redact";
import { prUrls, type Run, readsAllRepos, type Step, workSteps } from "./run";
import { isTerminalStep } from "./states";
import { stepNumber } from "./step-label";

// Tracker comments. Each carries Lisa's marker so Lisa never reacts to its own words.

export const runMarker = (runId: string) => `<!-- lisa:run=${runId} -->`;
export const MARKER_PATTERN = /<!-- lisa:run=([A-Za-z0-9]+) -->/;

/**
 * Text without HTML comments and tags (which can hide content or forge Lisa's marker), removed
 * until none is left: `<!<!-- x -->-- … -->` must not become a comment once the inner one is gone.
 */
export function stripHtml(text: string): string {
	let out = text;
	for (;;) {
		const next = out.replace(/<!--[\s\S]*?-->/g, "").replace(/<\/?[A-Za-z][^>]*>/g, "");
		if (next === out) return next;
		out = next;
	}
}

/** The final comment's cost line (docs/cost.md › Cost and budgets): the run's own, rounds apart. */
export const runCostLine = (run: Run): string => costLine(runCost(run));

export function successComment(run: Run, runUrl: string): string {
	const urls = prUrls(run);
	const list = urls.map((u) => `- ${u}`).join("\n");
	return [
		urls.length === 1
			? `Lisa opened a pull request for this issue:`
			: `Lisa opened ${urls.length} pull requests for this issue:`,
		list,
		"",
		runCostLine(run),
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

export function failureComment(run: Run, runUrl: string, returnedTo?: string): string {
	const urls = prUrls(run);
	const several = workSteps(run).length > 1;
	return [
		`Lisa could not resolve this issue: ${run.error ?? "the run failed"}`,
		...(several
			? ["", "Steps:", ...workSteps(run).map(stepLine)]
			: urls.length
				? ["", "Pull requests opened before the failure:", ...urls.map((u) => `- ${u}`)]
				: []),
		"",
		returnedTo ? `The issue is back in "${returnedTo}".` : "",
		runCostLine(run),
		`Run: ${runUrl}`,
		runMarker(run.runId),
	]
		.filter((l, i, all) => l !== "" || all[i - 1] !== "")
		.join("\n");
}

export function cancelledComment(run: Run, runUrl: string): string {
	return [
		`Lisa's run was cancelled: ${run.error ?? "stopped"}`,
		"",
		runCostLine(run),
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

function stepLine(s: Step): string {
	const what = s.status === "succeeded" ? `succeeded${s.prUrl ? `: ${s.prUrl}` : ""}` : s.status;
	return `- ${s.repo}: ${what}`;
}

/** Where the run works: its steps' repos, or every configured repo while it plans. */
export function runRepos(run: Run): string {
	if (run.steps.some(readsAllRepos) && !workSteps(run).length)
		return `planning across ${(run.config?.repos ?? []).map((r) => r.name).join(", ")}`;
	return workSteps(run)
		.map((s) => s.repo)
		.join(", ");
}

/** Posted when the run starts, so the team sees who is on the issue and where to follow it. */
export function startComment(run: Run, runUrl: string): string {
	const repos = runRepos(run);
	return [
		run.epic
			? `Lisa is working on this epic${repos ? ` (${repos})` : ""}: it researches the code, plans the work as sub-issues and resolves them in order. One comment here will follow the tasks.`
			: `Lisa is working on this issue${repos ? ` (${repos})` : ""}. It will comment again with the pull request or if it fails.`,
		"",
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

/** A plan's scope in one line, without markup that could hide text or forge Lisa's marker. */
export function scopeLine(scope: string, max = 300): string {
	return oneLine(stripHtml(scope), max);
}

/** The plan, numbered by order (equal numbers run side by side). */
export function planLines(plan: Plan): string[] {
	return plan.steps.map((s) => `${s.order}. ${s.repo} — ${scopeLine(s.scope)}`);
}

/** Posted when the planning step's plan was accepted and the first steps start. */
export function planComment(run: Run, plan: Plan, runUrl: string): string {
	const n = plan.steps.length;
	const parallel = new Set(plan.steps.map((s) => s.order)).size < n;
	return [
		n === 1
			? "Lisa planned this issue: one repository needs a change."
			: `Lisa planned this issue across ${n} repositories, in this order:`,
		...planLines(plan),
		"",
		`Each step opens its own pull request; a step starts once the earlier ones opened theirs.${parallel ? " Steps with the same number run side by side." : ""}`,
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

/** Posted when a step of a multi-repository run opened its pull request and the run goes on. */
export function stepComment(run: Run, stepIndex: number, runUrl: string): string {
	const step = run.steps[stepIndex];
	const work = workSteps(run);
	const position = stepNumber(run.steps, stepIndex);
	const next = work.filter((s) => !isTerminalStep(s.status));
	return [
		`Lisa opened a pull request in ${step?.repo ?? "the repository"} (step ${position} of ${work.length}): ${step?.prUrl ?? "(no URL)"}`,
		next.length ? `Next: ${next.map((s) => s.repo).join(", ")}.` : "",
		"",
		`Run: ${runUrl}`,
		runMarker(run.runId),
	]
		.filter((l, i) => l !== "" || i > 1)
		.join("\n");
}
