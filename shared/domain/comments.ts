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
