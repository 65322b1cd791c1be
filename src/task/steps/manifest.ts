import path from "node:path";
import * as z from "zod";
import {
	MAX_FOLLOW_UP_TEXT,
	MAX_REPLIES,
	MAX_REPLY_TEXT,
	type RoundInput,
	type RoundReport,
} from "../../domain/follow-up";
import { redact } from "../../domain/redact";
import { MANIFEST_FILE } from "../prompts/prompt";
import { readAgentFile } from "../sandbox/files";

const branch = z.string().min(1).optional();

const manifestSchema = z.object({
	branch,
	prTitle: z.string().trim().min(1, "prTitle is empty").max(256),
	prBody: z.string().max(60_000),
});
export type Manifest = z.infer<typeof manifestSchema>;

/** A follow-up round's manifest: what it did, and its answer to each review thread. */
const roundManifestSchema = z.object({
	branch,
	summary: z.string().trim().min(1, "summary is empty").max(MAX_FOLLOW_UP_TEXT),
	replies: z
		.array(
			z.object({
				comment: z.number().int().positive(),
				body: z.string().trim().min(1, "a reply is empty").max(MAX_FOLLOW_UP_TEXT),
			}),
		)
		.max(2 * MAX_REPLIES)
		.default([]),
});
export type RoundManifest = z.infer<typeof roundManifestSchema>;

const MAX_MANIFEST_BYTES = 1024 * 1024;

class ManifestError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "ManifestError";
	}
}

async function readJson<T>(dir: string, schema: z.ZodType<T>): Promise<T> {
	let text: string;
	try {
		text = await readAgentFile(path.join(dir, MANIFEST_FILE), MAX_MANIFEST_BYTES);
	} catch (err) {
		const { code } = err as NodeJS.ErrnoException;
		throw new ManifestError(
			code === "ENOENT"
				? `the agent did not write ${MANIFEST_FILE}`
				: `${MANIFEST_FILE} could not be read: ${code === "ELOOP" ? "it is a symbolic link" : code ? `error ${code}` : (err as Error).message}`,
		);
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		throw new ManifestError(`${MANIFEST_FILE} is not valid JSON`);
	}
	const parsed = schema.safeParse(raw);
	if (!parsed.success)
		throw new ManifestError(
			`${MANIFEST_FILE} is invalid: ${parsed.error.issues.map((i) => `${i.path.join(".") || "root"}: ${i.message}`).join("; ")}`,
		);
	return parsed.data;
}

export const readManifest = (dir: string): Promise<Manifest> => readJson(dir, manifestSchema);

export const readRoundManifest = (dir: string): Promise<RoundManifest> =>
	readJson(dir, roundManifestSchema);

/** The branch a manifest names, whichever kind it is (where Claude Code's own worktree is). */
export const manifestBranch = (dir: string): Promise<string | undefined> =>
	readJson(dir, z.object({ branch })).then((m) => m.branch);

/** The manifest the step's agent must write: a round's, or the pull request's title and body. */
export const checkManifest = (dir: string, round: boolean): Promise<unknown> =>
	round ? readRoundManifest(dir) : readManifest(dir);

/**
 * What a round reports from its manifest (the agent's words: untrusted). Replies only to the review
 * comments the round was given, one per thread; everything redacted and bounded again, since a
 * redaction can lengthen the text.
 */
export function roundReport(
	manifest: RoundManifest,
	round: RoundInput,
	secrets: readonly string[],
	noChange: boolean,
): RoundReport {
	const clean = (text: string, max = MAX_FOLLOW_UP_TEXT) => redact(text, secrets).slice(0, max);
	const given = new Set((round.comments ?? []).map((c) => c.id));
	const seen = new Set<number>();
	const replies = manifest.replies
		.filter((r) => given.has(r.comment) && !seen.has(r.comment) && seen.add(r.comment))
		.slice(0, MAX_REPLIES)
		.map((r) => ({ commentId: r.comment, body: clean(r.body, MAX_REPLY_TEXT) }));
	return {
		...(noChange ? { noChange: true } : {}),
		summary: clean(manifest.summary),
		...(replies.length ? { replies } : {}),
	};
}
