import * as z from "zod";
import { UNPRINTABLE } from "./printable";

// What a step changed (docs/http-api.md › What a step changed): `git diff --numstat` between the
// base and the published commit, bounded. A path is the agent's text: cut and without controls.

/** The files listed at most, most changed first; `files` still counts them all. */
export const MAX_LISTED_FILES = 50;
/** A listed path's length at most (its end kept: the file name says most). */
export const MAX_CHANGE_PATH = 300;
/** The longest title a step reports (GitHub's own limit is 256). */
export const MAX_PR_TITLE = 256;

const fileChangeSchema = z.object({
	path: z.string().min(1).max(MAX_CHANGE_PATH),
	additions: z.number().int().min(0),
	deletions: z.number().int().min(0),
	/** Git counts no lines in a binary file: additions and deletions are 0. */
	binary: z.literal(true).optional(),
});
type FileChange = z.infer<typeof fileChangeSchema>;

export const stepChangesSchema = z.object({
	files: z.number().int().min(0),
	additions: z.number().int().min(0),
	deletions: z.number().int().min(0),
	list: z.array(fileChangeSchema).max(MAX_LISTED_FILES),
});
export type StepChanges = z.infer<typeof stepChangesSchema>;

/** Printable text of at most `max` characters (its end kept). */
export function cleanPath(path: string, max = MAX_CHANGE_PATH): string {
	const clean = path.replace(UNPRINTABLE, "");
	return clean.length > max ? `…${clean.slice(clean.length - max + 1)}` : clean;
}

/** A title on one printable line of at most MAX_PR_TITLE characters. */
export function cleanTitle(title: string): string {
	const line = title.replace(UNPRINTABLE, " ").replace(/\s+/g, " ").trim();
	return line.length > MAX_PR_TITLE ? `${line.slice(0, MAX_PR_TITLE - 1)}…` : line;
}

/**
 * `git diff --numstat -z --no-renames` output (`<added>\t<deleted>\t<path>\0` per file, `-\t-` for a
 * binary one) as the step's change: totals over every file, the most changed listed first.
 */
export function parseNumstat(out: string): StepChanges {
	const all: FileChange[] = [];
	for (const record of out.split("\0")) {
		const m = /^\n?(-|\d+)\t(-|\d+)\t([\s\S]+)$/.exec(record);
		if (!m) continue;
		const [, add = "", del = "", path = ""] = m;
		const binary = add === "-" && del === "-";
		all.push({
			path: cleanPath(path) || "(unnamed)",
			additions: binary ? 0 : Number(add) || 0,
			deletions: binary ? 0 : Number(del) || 0,
			...(binary ? { binary: true as const } : {}),
		});
	}
	const size = (f: FileChange) => f.additions + f.deletions;
	const list = [...all]
		.sort((a, b) => size(b) - size(a) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
		.slice(0, MAX_LISTED_FILES);
	return {
		files: all.length,
		additions: all.reduce((n, f) => n + f.additions, 0),
		deletions: all.reduce((n, f) => n + f.deletions, 0),
		list,
	};
}

/** One short line: `3 files +120 −8`. */
export function changesLine(c: StepChanges): string {
	return `${c.files} ${c.files === 1 ? "file" : "files"} +${c.additions} −${c.deletions}`;
}
