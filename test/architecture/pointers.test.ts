import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Nodes, Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { describe, expect, it } from "vitest";

// Pointers into the docs stay true. The code, tests, infra and docs cite a section by its file and
// heading, as in (docs/cost.md › Cost and budgets), always on one line, and the README's own
// sections as (README › Quick start); Markdown links name `docs/<file>.md#anchor` or `#anchor`. A
// pointer whose file is gone, or whose heading was renamed or moved, fails here with its file and
// line (docs/development.md › Tests).

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The separator of a pointer. Spelled here by its code point, so the cases below plant no pointer. */
const SEP = String.fromCodePoint(0x203a);
/** A guide that does not exist, spelled so that this file does not name it. */
const GONE = ["docs", "gone.md"].join("/");

/** What a Markdown file offers to point at. */
interface Doc {
	root: Root;
	/** Each heading's text as GitHub shows it (inline code without its backticks), in order. */
	headings: { depth: number; text: string; anchor: string }[];
	anchors: Set<string>;
}

/** A node's text as GitHub shows it: inline code without its backticks, no markup. */
function plain(node: Nodes): string {
	if (node.type === "text" || node.type === "inlineCode") return node.value;
	return "children" in node ? node.children.map((child) => plain(child as Nodes)).join("") : "";
}

/** GitHub's anchor of a heading: lower case, punctuation dropped but `-` and `_`, spaces as `-`. */
function slug(text: string): string {
	return text
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
		.replace(/ /g, "-");
}

function readDoc(markdown: string): Doc {
	const root = fromMarkdown(markdown);
	const headings: Doc["headings"] = [];
	const seen = new Map<string, number>();
	const visit = (node: Nodes) => {
		if (node.type === "heading") {
			const text = plain(node).trim();
			const base = slug(text);
			const n = seen.get(base) ?? 0;
			seen.set(base, n + 1);
			headings.push({ depth: node.depth, text, anchor: n === 0 ? base : `${base}-${n}` });
		} else if ("children" in node) for (const child of node.children) visit(child as Nodes);
	};
	visit(root);
	return { root, headings, anchors: new Set(headings.map((h) => h.anchor)) };
}

/** Reads a file of the repository as a doc, once; undefined when there is no such file. */
type Docs = (file: string) => Doc | undefined;

function repositoryDocs(): Docs {
	const cache = new Map<string, Doc | undefined>();
	return (file) => {
		if (!cache.has(file)) {
			const full = path.join(ROOT, file);
			cache.set(file, existsSync(full) ? readDoc(readFileSync(full, "utf8")) : undefined);
		}
		return cache.get(file);
	};
}

/**
 * The heading a pointer's text names: the longest heading its text starts with, followed by no
 * letter or digit ("Security says what that mode risks" names "Security"; "Cost and budget" names
 * nothing when the heading is "Cost and budgets", nor "Cost and budgets" when it became "Costs").
 */
function namedHeading(doc: Doc, pointer: string): string | undefined {
	const text = pointer.replaceAll("`", "");
	let best: string | undefined;
	for (const { text: heading } of doc.headings)
		if (
			heading &&
			text.startsWith(heading) &&
			!/[\p{L}\p{N}_]/u.test(text.charAt(heading.length)) &&
			heading.length > (best?.length ?? 0)
		)
			best = heading;
	return best;
}

const POINTER = new RegExp(
	`(?<![\\w/.-])(README(?:\\.md)?|docs/[\\w.-]+\\.md)[ \\t]*${SEP}([^\\n]*)`,
	"g",
);
const PLAIN = /(?<![\w/.-])docs\/[\w.-]+\.md\b/g;

/** The problems of one text file's pointers, as `file:line: …`. */
function checkPointers(file: string, text: string, docs: Docs): string[] {
	const problems: string[] = [];
	// A JSON string spells the separator as an escape (biome.json's messages).
	const lines = text.replaceAll("\\u203a", SEP).split("\n");
	lines.forEach((line, i) => {
		const at = `${file}:${i + 1}`;
		for (const match of line.matchAll(PLAIN))
			if (!docs(match[0])) problems.push(`${at}: ${match[0]} does not exist`);
		for (const [, named = "", after = ""] of line.matchAll(POINTER)) {
			const target = named.startsWith("README") ? "README.md" : named;
			const doc = docs(target);
			if (!doc) {
				if (target === named) continue; // said above, as a plain reference
				problems.push(`${at}: ${target} does not exist`);
				continue;
			}
			// "A › B" names a section and one within it; "A, › B" two sections of the same file.
			for (const part of after.split(SEP)) {
				const pointer = part.trim();
				if (!pointer) {
					problems.push(
						`${at}: "${named} ${SEP}" names no heading on its line (a pointer is one line)`,
					);
					break;
				}
				const heading = namedHeading(doc, pointer);
				if (!heading) {
					problems.push(`${at}: no heading of ${target} is "${pointer}"`);
					break;
				}
				const rest = pointer.replaceAll("`", "").slice(heading.length).trim();
				if (rest !== "" && rest !== ",") break;
			}
		}
	});
	return problems;
}

/** The problems of a Markdown file's relative links: a file that is missing, an anchor no heading has. */
function checkLinks(file: string, doc: Doc, docs: Docs): string[] {
	const problems: string[] = [];
	const visit = (node: Nodes) => {
		if (node.type === "link" || node.type === "image" || node.type === "definition") {
			const url = node.url;
			if (!/^[a-z][a-z\d+.-]*:|^\/\//i.test(url)) {
				const [target, anchor] = url.split("#", 2);
				const to = target ? path.posix.join(path.posix.dirname(file), target) : file;
				const at = `${file}:${node.position?.start.line}`;
				if (target && !existsSync(path.join(ROOT, to)))
					problems.push(`${at}: ${url}: ${to} does not exist`);
				else if (anchor !== undefined && to.endsWith(".md")) {
					const linked = to === file ? doc : docs(to);
					if (!linked?.anchors.has(anchor))
						problems.push(`${at}: ${url}: no heading of ${to} has the anchor #${anchor}`);
				}
			}
		}
		if ("children" in node) for (const child of node.children) visit(child as Nodes);
	};
	visit(doc.root);
	return problems;
}

/** The problems of a guide's opening: its title, one line on what it holds, its table of contents. */
function checkOpening(file: string, doc: Doc): string[] {
	const [title, line, toc] = doc.root.children;
	const problems: string[] = [];
	if (title?.type !== "heading" || title.depth !== 1)
		problems.push(`${file}: does not start with its # title`);
	if (doc.headings.filter((h) => h.depth === 1).length !== 1)
		problems.push(`${file}: has more than one # title`);
	if (line?.type !== "paragraph")
		problems.push(`${file}: no line on what it holds after its title`);
	if (toc?.type !== "list") return [...problems, `${file}: no table of contents after that line`];
	const links: string[] = [];
	const visit = (node: Nodes) => {
		if (node.type === "link") links.push(node.url);
		else if ("children" in node) for (const child of node.children) visit(child as Nodes);
	};
	visit(toc);
	const wanted = doc.headings
		.filter((h) => h.depth === 2 || h.depth === 3)
		.map((h) => `#${h.anchor}`);
	for (const url of links)
		if (!url.startsWith("#") || !doc.anchors.has(url.slice(1)))
			problems.push(`${file}: its table of contents links ${url}, which no heading has`);
	if (links.join(" ") !== wanted.join(" "))
		problems.push(`${file}: its table of contents is not its ## and ### headings in order`);
	return problems;
}

/** Folders that hold no pointer of ours: dependencies, build output, data (as .gitignore has them). */
const SKIPPED = new Set([
	".git",
	"node_modules",
	".sst",
	".lisa/local",
	"bench/results",
	"test/artifacts",
	"coverage",
	"dist",
]);

/** The repository's text files, walked without a process (this test runs in `npm run check`). */
function textFiles(dir = ""): string[] {
	return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
		const file = dir ? `${dir}/${entry.name}` : entry.name;
		if (entry.isDirectory())
			return SKIPPED.has(file) || SKIPPED.has(entry.name) ? [] : textFiles(file);
		return entry.isFile() &&
			entry.name !== "package-lock.json" &&
			!/\.(png|jpe?g|gif|ico|webp|woff2?|ttf|gz|zip|pdf|log)$/i.test(entry.name)
			? [file]
			: [];
	});
}

const tracked = textFiles();
const guides = tracked.filter((f) => /^docs\/[^/]+\.md$/.test(f) && f !== "docs/architecture.md");

describe("pointers into the docs", () => {
	const docs = repositoryDocs();

	it("name files that exist and headings they have, each on one line", () => {
		const problems: string[] = [];
		for (const file of tracked) {
			const text = readFileSync(path.join(ROOT, file), "utf8");
			if (!text.includes("\0")) problems.push(...checkPointers(file, text, docs));
		}
		expect(problems).toEqual([]);
		expect(tracked.length).toBeGreaterThan(200);
	});

	it("in Markdown links, name files and anchors that exist", () => {
		const problems: string[] = [];
		for (const file of tracked.filter((f) => f.endsWith(".md"))) {
			const doc = docs(file);
			if (doc) problems.push(...checkLinks(file, doc, docs));
		}
		expect(problems).toEqual([]);
	});

	it("fail on a stale pointer, a broken one and a link to an anchor that is gone", () => {
		const doc = readDoc(
			"# Cost and budgets\n\n## Known limits\n\nSee [the limits](#known-limits), [gone](#gone).\n",
		);
		const files: Docs = (file) =>
			file === "docs/cost.md" || file === "README.md" ? doc : undefined;
		const code = [
			`// Budgets (docs/cost.md ${SEP} Cost and budgets): fine.`,
			`// Renamed since (docs/cost.md ${SEP} Cost and budget).`,
			`// A section and one in it (docs/cost.md ${SEP} Cost and budgets ${SEP} Limits).`,
			`// What that risks: docs/cost.md ${SEP} Known limits says.`,
			`// Broken over two lines (README ${SEP}`,
			"// Cost and budgets).",
			`// A file that went (${GONE} ${SEP} Anything), and ${GONE} alone.`,
		].join("\n");
		expect(checkPointers("src/x.ts", code, files)).toEqual([
			'src/x.ts:2: no heading of docs/cost.md is "Cost and budget)."',
			'src/x.ts:3: no heading of docs/cost.md is "Limits)."',
			`src/x.ts:5: "README ${SEP}" names no heading on its line (a pointer is one line)`,
			`src/x.ts:7: ${GONE} does not exist`,
			`src/x.ts:7: ${GONE} does not exist`,
		]);
		expect(checkLinks("docs/cost.md", doc, files)).toEqual([
			"docs/cost.md:5: #gone: no heading of docs/cost.md has the anchor #gone",
		]);
	});

	it("match a heading by its text as GitHub shows it, and GitHub's anchors", () => {
		const doc = readDoc("# T\n\n## Polling mode (`lisa run`)\n\n## Security\n\n## Security\n");
		expect(namedHeading(doc, "Polling mode (`lisa run`))")).toBe("Polling mode (lisa run)");
		expect(namedHeading(doc, "Polling mode")).toBeUndefined();
		expect(namedHeading(doc, "Security says what that mode risks")).toBe("Security");
		expect(namedHeading(doc, "Securitys")).toBeUndefined();
		expect([...doc.anchors]).toEqual(["t", "polling-mode-lisa-run", "security", "security-1"]);
		expect(slug("Follow-ups: red CI, reviews and mentions on Lisa's pull requests")).toBe(
			"follow-ups-red-ci-reviews-and-mentions-on-lisas-pull-requests",
		);
	});
});

describe("the README and the guides", () => {
	it("keep the README a front door", () => {
		const lines = readFileSync(path.join(ROOT, "README.md"), "utf8").trimEnd().split("\n");
		expect(lines.length).toBeLessThanOrEqual(320);
	});

	it("open each guide with its title, a line on what it holds and its table of contents", () => {
		expect(guides.length).toBeGreaterThan(5);
		const docs = repositoryDocs();
		const problems = guides.flatMap((file) => checkOpening(file, docs(file) as Doc));
		expect(problems).toEqual([]);
		const planted = readDoc(
			"# T\n\nWhat it holds.\n\n- [A](#a)\n- [Gone](#gone)\n\n## A\n\n## B\n",
		);
		expect(checkOpening("t.md", planted)).toEqual([
			"t.md: its table of contents links #gone, which no heading has",
			"t.md: its table of contents is not its ## and ### headings in order",
		]);
	});
});
