import {
	EPIC_LIMITS,
	type EpicPlan,
	type EpicResearch,
	type EpicTask,
	NEEDS_SPEC_SECTION,
	type PhaseVerdict,
	PLAN_FILE_MD,
	PLAN_SECTIONS,
	RESEARCH_FILE,
	RESEARCH_SECTIONS,
	TASK_FILE_NAME,
	TASK_SECTIONS,
	TASKS_DIR,
} from "./epic";
import { findCycle, topologicalOrder } from "./epic-graph";
import { printable } from "./printable";
import { oneLine as cut } from "./redact";

// The epic phases' files checked (docs/epics.md › Epics): every reason a file falls short, each
// naming the file, so the next attempt's prompt can list them all. The files come from an agent
// that read the issue: they are untrusted, so nothing here builds a pattern from them and every
// quote is bounded.

/** One trimmed line of printable text, at most `max` characters. */
const oneLine = (text: string, max: number) => cut(printable(text), max);

/** How long a quoted piece of a file is in a reason. */
const QUOTE_CHARS = 80;
const { questionChars: QUESTION_CHARS, titleChars: TITLE_CHARS } = EPIC_LIMITS;

const TASK_HEADING = /^#[ \t]+Task[ \t]+(\d{1,4})[ \t]*:[ \t]*(.*)$/i;
/** plan.md's `## Dependencies` line: `- 02: [01, 03]`. */
const PLAN_DEPENDENCY = /^-\s*(\d{1,4}):\s*\[(.*)\]\s*$/;
/** A task file's `## Dependencies` line: `- 01`, optionally followed by words. */
const TASK_DEPENDENCY = /^-\s*(\d{1,4})\b/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** One line of untrusted text, quoted and cut for a reason. */
const quote = (text: string, max = QUOTE_CHARS) => `"${oneLine(text, max)}"`;

/** A task's id compared by number: "01" and "1" are the same task. */
const idKey = (id: string) => String(Number(id));

const sizeReason = (file: string, text: string, limit: number) => {
	const bytes = Buffer.byteLength(text);
	return bytes > limit
		? `${file} is ${bytes} bytes, over the limit of ${limit} bytes: shorten it`
		: undefined;
};

/**
 * The level-2 sections of a markdown text: `## Heading` (trimmed, lower-cased) → its trimmed body
 * up to the next `## `. Headings inside fenced code blocks do not count; a heading written twice
 * keeps its first body.
 */
export function markdownSections(text: string): Map<string, string> {
	const sections = new Map<string, string>();
	let name: string | undefined;
	let body: string[] = [];
	let fence: string | undefined;
	const close = () => {
		if (name !== undefined && !sections.has(name)) sections.set(name, body.join("\n").trim());
	};
	for (const line of text.split(/\r?\n/)) {
		const marker = line.match(FENCE)?.[1];
		if (fence) {
			if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
		} else if (marker) fence = marker;
		else if (/^##[ \t]/.test(line) || line === "##") {
			close();
			name = sectionKey(line.slice(2));
			body = [];
			continue;
		}
		body.push(line);
	}
	close();
	return sections;
}

/** How a section is looked up: trimmed, closing #s dropped, lower-cased. */
const sectionKey = (heading: string) =>
	heading
		.replace(/[ \t]#+[ \t]*$/, "")
		.trim()
		.toLowerCase();

/** Each required section missing or empty, named. */
function sectionReasons(
	file: string,
	sections: Map<string, string>,
	required: readonly string[],
): string[] {
	return required.flatMap((s) => {
		const body = sections.get(sectionKey(s));
		if (body === undefined) return [`${file} has no \`## ${s}\` section`];
		return body ? [] : [`${file}'s \`## ${s}\` section is empty`];
	});
}

/** research.md: the five sections, or a `## Needs Spec` section with the questions to ask instead. */
export function checkResearch(text: string | undefined): PhaseVerdict<EpicResearch> {
	if (text === undefined) return { ok: false, missing: [`${RESEARCH_FILE} was not written`] };
	const big = sizeReason(RESEARCH_FILE, text, EPIC_LIMITS.researchBytes);
	if (big) return { ok: false, missing: [big] };
	const sections = markdownSections(text);
	const needsSpec = sections.get(sectionKey(NEEDS_SPEC_SECTION));
	const questions = (needsSpec ?? "")
		.split("\n")
		.filter((l) => /^\s*[-*]\s+\S/.test(l))
		.map((l) => oneLine(l.replace(/^\s*[-*]\s+/, ""), QUESTION_CHARS))
		.filter(Boolean)
		.slice(0, EPIC_LIMITS.questions);
	if (questions.length) return { ok: true, value: { text, needsSpec: questions } };
	const missing = sectionReasons(RESEARCH_FILE, sections, RESEARCH_SECTIONS);
	// A `## Needs Spec` without questions is no answer either, but harmless beside a full research.
	if (missing.length && needsSpec !== undefined)
		missing.push(
			`${RESEARCH_FILE}'s \`## ${NEEDS_SPEC_SECTION}\` section lists no questions: write each as a \`- question\` line`,
		);
	return missing.length ? { ok: false, missing } : { ok: true, value: { text } };
}

/** A file the agent wrote: its text, or why it could not be read (said instead of any other reason). */
export type FileRead = { text: string } | { error: string };

export interface PlanFiles {
	/** plan.md; undefined when it was not written. */
	plan?: FileRead;
	/** The files found in `tasks/`, each as `tasks/<name>`; an error when tasks/ could not be listed. */
	tasks: ({ file: string } & FileRead)[] | { error: string };
}

/** A task file read, before the plan's graph is checked. */
type Draft = Omit<EpicTask, "dependsOn"> & { key: string; fileDeps: string[] };

/**
 * plan.md and the task files: every section, every task in one configured repository, the graph
 * (plan.md's `## Dependencies` is the graph; each task file's must say the same) known and acyclic.
 * Ids compare by number: "01" and "1" are one task, so a second file with its number is refused,
 * and a dependency may be written either way (the result names tasks by their files' ids).
 * The tasks come back in dependency order, by id where the graph leaves the order open.
 */
export function checkPlan(
	input: PlanFiles,
	repos: readonly string[],
	maxTasks: number,
): PhaseVerdict<EpicPlan> {
	const reasons: string[] = [];
	const fail = () => ({ ok: false as const, missing: [...new Set(reasons)] });
	if (input.plan === undefined) reasons.push(`${PLAN_FILE_MD} was not written`);
	else if ("error" in input.plan) reasons.push(input.plan.error);
	const plan = input.plan && "text" in input.plan ? input.plan.text : undefined;
	const big =
		plan === undefined ? undefined : sizeReason(PLAN_FILE_MD, plan, EPIC_LIMITS.planBytes);
	if (big) reasons.push(big);
	const planSections = plan === undefined || big ? undefined : markdownSections(plan);
	if (planSections) reasons.push(...sectionReasons(PLAN_FILE_MD, planSections, PLAN_SECTIONS));

	// tasks/ unlisted: what its files would be checked against is unknown.
	if ("error" in input.tasks) {
		reasons.push(input.tasks.error);
		return fail();
	}
	const files = input.tasks;
	const limit = Math.min(maxTasks, EPIC_LIMITS.maxTasks);
	if (!files.length)
		reasons.push(`${TASKS_DIR}/ has no task files: write one \`${TASKS_DIR}/NN-slug.md\` per task`);
	if (files.length > limit)
		reasons.push(
			`${TASKS_DIR}/ holds ${files.length} task files, over the limit of ${limit}: merge tasks`,
		);
	const byKey = new Map<string, Draft>();
	/** Every task file's id, read or not: a dependency on a task whose file has problems is known. */
	const named = new Map<string, string>();
	// Past the limit the files are still checked (so the reasons are about them), up to a bound.
	for (const t of files.slice(0, EPIC_LIMITS.taskEntries)) {
		const id = taskId(t.file);
		const twin = id === undefined ? undefined : named.get(idKey(id));
		if (id !== undefined && twin) {
			reasons.push(`${twin} and ${t.file} are both task ${id}: give each task its own number`);
			continue;
		}
		if (id !== undefined) named.set(idKey(id), t.file);
		// Unread, it is still a task: the plan's line for it is not "a line for no task file".
		if ("error" in t) {
			reasons.push(t.error);
			continue;
		}
		const draft = readTask(t, repos, reasons);
		if (!draft) continue;
		byKey.set(draft.key, draft);
	}
	const graph = planSections
		? planDependencies(planSections.get("dependencies") ?? "", reasons)
		: undefined;
	if (!graph) return fail();

	for (const [key, line] of graph)
		if (!named.has(key))
			reasons.push(
				`${PLAN_FILE_MD}'s Dependencies has a line for ${line.id}, which has no task file`,
			);
	const idOf = (key: string) => byKey.get(key)?.id ?? graph.get(key)?.id ?? key;
	for (const key of named.keys()) {
		const line = graph.get(key);
		if (!line) {
			const id = taskId(named.get(key) as string) as string;
			reasons.push(
				`${PLAN_FILE_MD}'s Dependencies has no line for task ${id} (write \`- ${id}: []\` when it depends on nothing)`,
			);
			continue;
		}
		for (const [i, dep] of line.deps.entries())
			if (!named.has(dep))
				reasons.push(
					`${PLAN_FILE_MD}: task ${line.id} depends on ${line.written[i]}, which is not a task`,
				);
		const draft = byKey.get(key);
		if (!draft) continue;
		const planned = sortedIds(line.deps);
		const written = sortedIds(draft.fileDeps);
		if (planned.join() !== written.join())
			reasons.push(
				`${draft.file}'s Dependencies (${written.map(idOf).join(", ") || "None"}) disagree with ${PLAN_FILE_MD}'s (${planned.map(idOf).join(", ") || "None"}): make them the same`,
			);
	}
	const nodes = [...named.keys()]
		.sort((a, b) => Number(a) - Number(b))
		.map((key) => ({
			id: key,
			dependsOn: (graph.get(key)?.deps ?? []).filter((d) => named.has(d)),
		}));
	const cycle = findCycle(nodes);
	if (cycle) reasons.push(`the dependencies form a cycle: ${cycle.map(idOf).join(" → ")}`);
	if (reasons.length) return fail();

	const tasks = topologicalOrder(nodes).map((key) => {
		const { key: _key, fileDeps: _deps, ...task } = byKey.get(key) as Draft;
		return { ...task, dependsOn: sortedIds(graph.get(key)?.deps ?? []).map(idOf) };
	});
	return { ok: true, value: { text: plan as string, tasks } };
}

/** The id in a task file's name (`tasks/01-slug.md` → "01"); undefined for any other name. */
const taskId = (file: string): string | undefined =>
	file.startsWith(`${TASKS_DIR}/`)
		? file.slice(TASKS_DIR.length + 1).match(TASK_FILE_NAME)?.[1]
		: undefined;

const sortedIds = (keys: readonly string[]) =>
	[...new Set(keys)].sort((a, b) => Number(a) - Number(b));

/** plan.md's `## Dependencies`: task id → the ids it depends on (by number); undefined when unreadable. */
function planDependencies(
	body: string,
	reasons: string[],
): Map<string, { id: string; deps: string[]; written: string[] }> | undefined {
	const graph = new Map<string, { id: string; deps: string[]; written: string[] }>();
	const before = reasons.length;
	for (const raw of body.split("\n")) {
		const line = raw.trim();
		if (!line.startsWith("-")) continue;
		const m = line.match(PLAN_DEPENDENCY);
		if (!m) {
			reasons.push(
				`${PLAN_FILE_MD}'s Dependencies has a line it cannot read: ${quote(line)} (write \`- 02: [01]\`, or \`- 01: []\`)`,
			);
			continue;
		}
		const id = m[1] as string;
		const deps: string[] = [];
		const written: string[] = [];
		for (const item of (m[2] as string).split(",").map((s) => s.trim())) {
			if (!item) continue;
			if (/^\d{1,4}$/.test(item)) {
				deps.push(idKey(item));
				written.push(item);
			} else
				reasons.push(
					`${PLAN_FILE_MD}: task ${id} depends on ${quote(item)}, which is not a task id`,
				);
		}
		if (graph.has(idKey(id)))
			reasons.push(`${PLAN_FILE_MD}'s Dependencies has two lines for task ${id}`);
		else graph.set(idKey(id), { id, deps, written });
	}
	return reasons.length > before ? undefined : graph;
}

/** One task file checked on its own; undefined (with the reasons) when it cannot be a task. */
function readTask(
	t: { file: string; text: string },
	repos: readonly string[],
	reasons: string[],
): Draft | undefined {
	const id = taskId(t.file);
	if (!id) {
		const name = t.file.startsWith(`${TASKS_DIR}/`) ? t.file.slice(TASKS_DIR.length + 1) : t.file;
		reasons.push(
			`${TASKS_DIR}/ holds ${quote(name)}, which is not a task file name: name each \`NN-slug.md\` (e.g. 01-add-the-model.md)`,
		);
		return undefined;
	}
	const file = t.file;
	const before = reasons.length;
	const big = sizeReason(file, t.text, EPIC_LIMITS.taskBytes);
	if (big) {
		reasons.push(big);
		return undefined;
	}
	const heading = t.text
		.split(/\r?\n/)
		.map((l) => l.match(TASK_HEADING))
		.find(Boolean);
	const title = heading ? oneLine(heading[2] as string, TITLE_CHARS + 1) : "";
	if (!heading) reasons.push(`${file} has no \`# Task ${id}: <title>\` heading`);
	else if (idKey(heading[1] as string) !== idKey(id))
		reasons.push(
			`${file} is headed Task ${heading[1]}: the number must be the file name's (${id})`,
		);
	else if (!title) reasons.push(`${file}'s \`# Task ${id}:\` heading has no title`);
	else if (title.length > TITLE_CHARS)
		reasons.push(`${file}'s title is longer than ${TITLE_CHARS} characters: shorten it`);
	const sections = markdownSections(t.text);
	reasons.push(...sectionReasons(file, sections, TASK_SECTIONS));
	const repo = (sections.get("repository") ?? "").replace(/[`*]/g, "").trim();
	if (repo && !repos.includes(repo))
		reasons.push(
			`${file} names repository ${quote(repo)}, which is not configured: name one of ${repos.join(", ")}`,
		);
	const fileDeps = taskDependencies(file, sections.get("dependencies") ?? "", reasons);
	if (reasons.length > before) return undefined;
	return {
		key: idKey(id),
		id,
		title,
		repo,
		goal: sections.get("goal") ?? "",
		doneWhen: sections.get("done when") ?? "",
		file,
		body: t.text,
		fileDeps,
	};
}

/** A task file's `## Dependencies`: `- 01` lines, or `None`. */
function taskDependencies(file: string, body: string, reasons: string[]): string[] {
	if (/^none\.?$/i.test(body.trim())) return [];
	const deps: string[] = [];
	for (const raw of body.split("\n")) {
		const line = raw.trim();
		if (!line) continue;
		const m = line.match(TASK_DEPENDENCY);
		if (m) deps.push(idKey(m[1] as string));
		else
			reasons.push(
				`${file}'s Dependencies has a line it cannot read: ${quote(line)} (write \`- 01\` lines, or None)`,
			);
	}
	return deps;
}
