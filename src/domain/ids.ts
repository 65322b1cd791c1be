import { randomBytes } from "node:crypto";
import { ulid } from "ulid";
import * as z from "zod";

// The shapes of the ids that cross Lisa's boundaries (queue messages, API paths, launcher paths,
// cursors). One definition each, checked wherever an id comes in: an id that reaches a file path,
// a store key or a log has this shape, or it never gets that far.

/** A ULID: 26 characters of Crockford's base32 (run ids, event ids). */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export const isRunId = (v: unknown): v is string => typeof v === "string" && ULID_PATTERN.test(v);

/** Random bytes for new ids, read from the system a block at a time (ulid() alone reads once per character). */
let pool = Buffer.alloc(0);
let used = 0;
function pooledRandom(): number {
	if (used >= pool.length) {
		pool = randomBytes(4096);
		used = 0;
	}
	return (pool[used++] as number) / 256;
}

/** A new run id: a ULID of the time and 80 random bits. */
export const newRunId = (now: number = Date.now()): string => ulid(now, pooledRandom);

export const runIdSchema = z
	.string()
	.regex(ULID_PATTERN, "must be a run id (a ULID: 26 characters of 0-9 and A-Z)");

/** Issue ids, keys and URLs as trackers and people write them: printable, no spaces, bounded. */
const MAX_ISSUE_REF = 512;
const ISSUE_REF_PATTERN = /^[\x21-\x7e]+$/;

export const issueRefSchema = z
	.string()
	.min(1, "must not be empty")
	.max(MAX_ISSUE_REF, `must be at most ${MAX_ISSUE_REF} characters`)
	.regex(ISSUE_REF_PATTERN, "must be printable ASCII without spaces");
