import type { Run } from "./run";
import { prUrls } from "./run";

// Tracker comments. Each carries Lisa's marker so Lisa never reacts to its own words.

export const runMarker = (runId: string) => `<!-- lisa:run=${runId} -->`;
export const MARKER_PATTERN = /<!-- lisa:run=([A-Za-z0-9]+) -->/;

export function successComment(run: Run, runUrl: string): string {
	const urls = prUrls(run);
	const list = urls.map((u) => `- ${u}`).join("\n");
	return [
		urls.length === 1
			? `Lisa opened a pull request for this issue:`
			: `Lisa opened ${urls.length} pull requests for this issue:`,
		list,
		"",
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

export function failureComment(run: Run, runUrl: string, returnedTo?: string): string {
	const urls = prUrls(run);
	return [
		`Lisa could not resolve this issue: ${run.error ?? "the run failed"}`,
		...(urls.length
			? ["", "Pull requests opened before the failure:", ...urls.map((u) => `- ${u}`)]
			: []),
		"",
		returnedTo ? `The issue is back in "${returnedTo}".` : "",
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
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

/** Posted when the run starts, so the team sees who is on the issue and where to follow it. */
export function startComment(run: Run, runUrl: string): string {
	const repos = run.steps.map((s) => s.repo).join(", ");
	return [
		`Lisa is working on this issue${repos ? ` (${repos})` : ""}. It will comment again with the pull request or if it fails.`,
		"",
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

/** Posted when a step of a multi-repository run opened its pull request and the next step starts. */
export function stepComment(run: Run, stepIndex: number, runUrl: string): string {
	const step = run.steps[stepIndex];
	const next = run.steps[stepIndex + 1];
	return [
		`Lisa opened a pull request in ${step?.repo ?? "the repository"} (step ${stepIndex + 1} of ${run.steps.length}): ${step?.prUrl ?? "(no URL)"}`,
		next ? `Next: ${next.repo}.` : "",
		"",
		`Run: ${runUrl}`,
		runMarker(run.runId),
	]
		.filter((l, i) => l !== "" || i > 1)
		.join("\n");
}
