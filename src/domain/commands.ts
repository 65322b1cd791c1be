import type { Nodes, PhrasingContent } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";

// What a comment asks of Lisa (docs/follow-ups.md › Follow-ups, docs/cost.md › Cost and budgets):
// `/lisa …` commands and `@<login>` mentions, read as Markdown so that only what people see as the
// comment's own words counts. An HTML comment, a code block, inline code or a quote of someone
// else's words asks nothing: a command or mention counts only in a paragraph (a list item's
// included). The one reader of GitHub comments and Linear session messages alike.

/** Stands for inline code, HTML or an image inside a paragraph: never a word, never a space. */
const HIDDEN = "\uFFFC";

/** The text of each paragraph outside block quotes, code and HTML, as people read it. */
export function paragraphs(markdown: string): string[] {
	const out: string[] = [];
	const visit = (node: Nodes) => {
		if (node.type === "paragraph") out.push(node.children.map(phrasing).join(""));
		// Lists hold paragraphs; block quotes, code, HTML, headings and definitions hold none that count.
		else if (node.type === "root" || node.type === "list" || node.type === "listItem")
			for (const child of node.children) visit(child);
	};
	visit(fromMarkdown(markdown));
	return out;
}

function phrasing(node: PhrasingContent): string {
	switch (node.type) {
		case "text":
			return node.value;
		case "break":
			return "\n";
		case "emphasis":
		case "strong":
		case "delete":
		case "link":
		case "linkReference":
			return node.children.map(phrasing).join("");
		default:
			return HIDDEN;
	}
}

/** The paragraphs' lines, each without its indentation: a command starts one of them. */
const linesOf = (said: string[]) => said.flatMap((p) => p.split("\n").map((l) => l.trimStart()));

/** Whether a comment asks Lisa for something: `@<login>` in a paragraph, or `/lisa` starting a line of one. */
export function mentionsLisa(body: string, login?: string): boolean {
	const said = paragraphs(body);
	if (linesOf(said).some((l) => /^\/lisa\b/i.test(l))) return true;
	if (!login) return false;
	// A GitHub App's login is `<slug>[bot]`; people mention it as `@<slug>`.
	const names = [login, login.replace(/\[bot\]$/i, "")].map((n) =>
		n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
	);
	const mention = new RegExp(`(^|[^\\w@/-])@(${names.join("|")})(?![\\w[-])`, "i");
	return said.some((p) => mention.test(p));
}

/**
 * `/lisa continue` starting a line of a paragraph: a yes to the run's pending approval. In the
 * Linear session, which asked for the answer, a message that is just "continue" is one too.
 */
export function isContinue(text: string, session = false): boolean {
	const said = paragraphs(text);
	if (linesOf(said).some((l) => /^\/lisa[ \t]+continue\b/i.test(l))) return true;
	return session && said.length === 1 && /^\s*continue\s*[.!]?\s*$/i.test(said[0] as string);
}

/** When a comment was written, as the messages carry it (ISO 8601): undefined for a time that is none. */
export function writtenAt(time: string | null | undefined): string | undefined {
	const ms = Date.parse(time ?? "");
	return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}
