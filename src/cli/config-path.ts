import { type Document, isMap, isScalar, isSeq, type Node, parseDocument, stringify } from "yaml";
import { nearest } from "../config/nearest";
import { CliError } from "./exit";

// Dotted paths into the config (`limits.max_attempts`, `repos.0.name`): reading the effective
// config and editing the YAML document in place (comments kept). Pure: no files.

function parsePath(text: string): (string | number)[] {
	const parts = text.split(".");
	if (!text || parts.some((p) => p === ""))
		throw new CliError(
			`"${text}" is not a config path (use dots: limits.max_attempts, repos.0.name)`,
		);
	return parts.map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The value at `path`, or a CliError naming what is there instead. */
export function getPath(config: unknown, pathText: string): unknown {
	let here: unknown = config;
	const walked: (string | number)[] = [];
	for (const key of parsePath(pathText)) {
		const next = isObject(here) ? (here as Record<string | number, unknown>)[key] : undefined;
		if (next === undefined) {
			const at = walked.join(".") || "the config";
			const has = isObject(here)
				? Array.isArray(here)
					? `it has ${here.length} item(s)`
					: `it has: ${Object.keys(here).join(", ")}`
				: "it is not a mapping or a list";
			const near =
				isObject(here) && !Array.isArray(here)
					? nearest(String(key), Object.keys(here))
					: undefined;
			const meant = near ? `: did you mean \`${[...walked, near].join(".")}\`?` : "";
			throw new CliError(`no "${pathText}" in the config: ${at} has no ${key} (${has})${meant}`);
		}
		walked.push(key);
		here = next;
	}
	return here;
}

/** How edited documents are written: flow lists as `[a, b]`, the way the template has them. */
export const WRITE_OPTIONS = { flowCollectionPadding: false } as const;

/** Scalars as they are, mappings and lists as YAML. */
export function formatValue(value: unknown): string {
	if (isObject(value)) return stringify(value).trimEnd();
	return String(value);
}

/** `path=value`, the value read as YAML (a scalar or a flow list/mapping). */
export function parseAssignment(text: string): { path: string; value: Node | null } {
	const eq = text.indexOf("=");
	if (eq <= 0)
		throw new CliError(`--set takes <path>=<value>, e.g. limits.max_attempts=5 (got "${text}")`);
	const valueDoc = parseDocument(text.slice(eq + 1));
	if (valueDoc.errors.length)
		throw new CliError(
			`the value is not valid YAML: ${valueDoc.errors[0]?.message.split("\n")[0]}`,
		);
	return { path: text.slice(0, eq).trim(), value: valueDoc.contents as Node | null };
}

/** Sets `path` in the document; a replaced value keeps its comments (a scalar keeps its node). */
export function setPath(doc: Document, pathText: string, value: Node | null): void {
	const keys = parsePath(pathText);
	const old = doc.getIn(keys, true) as Node | undefined;
	if (isScalar(old) && (isScalar(value) || value === null)) {
		old.value = isScalar(value) ? value.value : null;
		return;
	}
	if (value && old && (isMap(old) || isSeq(old) || isScalar(old))) {
		value.comment = old.comment;
		value.commentBefore = old.commentBefore;
		value.spaceBefore = old.spaceBefore;
	}
	doc.setIn(keys, value);
}
