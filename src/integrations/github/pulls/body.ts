import { MARKER_PATTERN, runMarker, stripHtml } from "../../../domain/comments";

// PR body post-processing (docs/agent-task.md › Publishing): a safety net for whatever the agent
// wrote.

export function cleanPrBody(body: string): string {
	let text = body.replace(/\r\n/g, "\n");
	// Raw HTML breaks GitHub rendering (and can hide content): drop tags, keep their text.
	text = stripHtml(text);
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
	/** The run's pull requests in other repositories (multi-repo runs). */
	related?: readonly RelatedPr[];
}): string {
	// A GitHub issue (`owner/name#12`) is linked and closed on merge by its reference.
	const githubIssue = input.issueKey && /^[\w.-]+\/[\w.-]+#\d+$/.test(input.issueKey);
	const resolves = githubIssue ? input.issueKey : (input.issueUrl ?? input.issueKey);
	return [
		cleanPrBody(input.body) || "- **What**: see the linked issue",
		relatedSection(input.related ?? []),
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

// Multi-repo runs: each PR lists its siblings in a marked section that Lisa rewrites (never appends
// twice) as later steps open theirs. The agent's text cannot forge the markers: cleanPrBody drops
// HTML comments.

export interface RelatedPr {
	repo: string;
	url: string;
}

const RELATED_START = "<!-- lisa:related -->";
const RELATED_END = "<!-- /lisa:related -->";
const RELATED = /<!-- lisa:related -->[\s\S]*?<!-- \/lisa:related -->/;

export function relatedSection(links: readonly RelatedPr[]): string {
	if (!links.length) return "";
	return [
		RELATED_START,
		"### Related pull requests",
		"This issue spans several repositories; the other parts:",
		...links.map((l) => `- ${l.repo}: ${l.url}`),
		RELATED_END,
	].join("\n");
}

/** The links of a body's related section. */
export function relatedLinks(body: string): RelatedPr[] {
	const section = body.match(RELATED)?.[0] ?? "";
	return [...section.matchAll(/^- ([^:\n]+): (\S+)\r?$/gm)].map((m) => ({
		repo: m[1] as string,
		url: m[2] as string,
	}));
}

/**
 * The body with its related section holding its own links plus `add` (by URL, never `self`): the
 * section is replaced in place, or inserted before the issue link and Lisa's marker.
 */
export function withRelated(body: string, add: readonly RelatedPr[], self?: string): string {
	const links = [...relatedLinks(body)];
	for (const l of add) if (l.url !== self && !links.some((x) => x.url === l.url)) links.push(l);
	const section = relatedSection(links);
	if (RELATED.test(body)) return body.replace(RELATED, () => section);
	if (!section) return body;
	const tail = body.search(new RegExp(`^(Resolves .*|${MARKER_PATTERN.source})$`, "m"));
	return tail < 0
		? `${body.trimEnd()}\n\n${section}`
		: `${body.slice(0, tail)}${section}\n\n${body.slice(tail)}`;
}
