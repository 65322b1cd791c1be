import { runMarker } from "./comments";

// PR body post-processing (seed 004 §3): a safety net for whatever the agent wrote.

export function cleanPrBody(body: string): string {
	let text = body.replace(/\r\n/g, "\n");
	// Raw HTML breaks GitHub rendering (and can hide content): drop tags, keep their text.
	text = text.replace(/<!--[\s\S]*?-->/g, "").replace(/<\/?[A-Za-z][^>]*>/g, "");
	text = text.replace(/^\s*\n+|\n+\s*$/g, "").trim();
	if (text && !text.includes("\n")) {
		// A wall of text: one bullet per sentence.
		const sentences = text.split(/(?<=[.!?])\s+(?=[A-Z0-9`*_])/).filter(Boolean);
		if (sentences.length > 1) text = sentences.map((s) => `- ${s.trim()}`).join("\n");
	}
	return text.replace(/^(\s*)\* /gm, "$1- ");
}

export function prBody(input: {
	body: string;
	issueUrl?: string;
	issueKey?: string;
	runId: string;
	extra?: string;
}): string {
	// A GitHub issue (`owner/name#12`) is linked and closed on merge by its reference.
	const githubIssue = input.issueKey && /^[\w.-]+\/[\w.-]+#\d+$/.test(input.issueKey);
	const resolves = githubIssue ? input.issueKey : (input.issueUrl ?? input.issueKey);
	return [
		cleanPrBody(input.body) || "- **What**: see the linked issue",
		input.extra ?? "",
		resolves ? `Resolves ${resolves}` : "",
		runMarker(input.runId),
	]
		.filter(Boolean)
		.join("\n\n");
}

const TYPES = "feat|fix|refactor|chore|docs|test|perf|build|ci|style|revert";
const CONVENTIONAL = new RegExp(`^(${TYPES})(\\([^)]*\\))?(!)?\\s*[:\\-–]\\s*(\\S.*)$`, "i");
const MAX_TITLE = 256;

/** The PR title in conventional-commit form: a near miss is normalised, anything else is a feat. */
export function conventionalTitle(title: string): string {
	const t = title.replace(/\s+/g, " ").trim();
	const m = CONVENTIONAL.exec(t);
	const out = m
		? `${(m[1] as string).toLowerCase()}${m[2] ?? ""}${m[3] ?? ""}: ${m[4]}`
		: `feat: ${t}`;
	return out.slice(0, MAX_TITLE);
}
