import * as z from "zod";
import { SOURCES } from "../config/schema";
import { issueRefSchema, runIdSchema, ULID_PATTERN } from "../domain/ids";
import { RUN_STATUSES } from "../domain/states";

// The runs API's requests as zod schemas: the routes validate with them and the OpenAPI document
// describes them. The answers are ./answers.ts.

const time = z
	.union([z.iso.datetime({ offset: true }), z.iso.date()], {
		error:
			"expected an ISO 8601 date-time with its zone (2026-01-31T09:00:00Z) or a date (2026-01-31)",
	})
	.transform((v) => new Date(v).toISOString())
	.meta({ description: "ISO 8601 date-time or date (UTC midnight)" });

const limit = (def: number, max: number) =>
	z.coerce
		.number()
		.int()
		.min(1)
		.default(def)
		.transform((n) => Math.min(n, max))
		.meta({ description: `Page size (at most ${max}; larger asks get ${max})` });

/** A cursor is `nextCursor` as the store wrote it; the store checks what it holds (else 400). */
const cursor = z
	.string()
	.max(1024)
	.optional()
	.meta({ description: "`nextCursor` of the previous page, as it was" });

/** The `{id}` of every /api/runs/{id}… route. */
export const runPath = z.object({ id: runIdSchema.meta({ description: "The run's id (a ULID)" }) });

export const listQuery = z.object({
	status: z.enum(RUN_STATUSES).optional(),
	source: z.enum(SOURCES).optional(),
	repo: z
		.string()
		.min(1)
		.max(200)
		.optional()
		.meta({ description: "Runs with a step in this repo (name)" }),
	issue: issueRefSchema.optional().meta({ description: "The tracker's issue id or key" }),
	since: time.optional().meta({ description: "Created at or after (ISO 8601)" }),
	until: time.optional().meta({ description: "Created before (ISO 8601)" }),
	limit: limit(20, 100),
	cursor,
});

export const eventsQuery = z.object({ limit: limit(100, 500), cursor });

const eventId = z.string().regex(ULID_PATTERN, "an event id");

export const streamQuery = z.object({
	after: eventId
		.optional()
		.meta({ description: "Resume after this event id (or send Last-Event-ID)" }),
});

/** What a reconnecting EventSource sends; the stream reads it as `after` (streamQuery). */
export const streamHeaders = z.object({
	"Last-Event-ID": eventId
		.optional()
		.meta({ description: "Resume after this event id (the SSE id of the last event seen)" }),
});

export const statsQuery = z.object({
	since: time
		.optional()
		.meta({ description: "Window start (default: 00:00 UTC 29 days before `until`'s day)" }),
	until: time.optional().meta({ description: "Window end, exclusive (default: now)" }),
});

const jsonKind = (v: unknown) =>
	v === null
		? "null"
		: Array.isArray(v)
			? "a list"
			: typeof v === "object"
				? "an object"
				: `a ${typeof v}`;
const ISSUE_REQUIRED = "issue is required: an id, key (ENG-123) or URL";
// A number is refused, not read as text: 123 could be GitHub's issue number or a Linear id, and
// JSON numbers lose digits past 2^53; "123" in quotes says which one is meant.
const issue = z
	.string({
		error: (i) =>
			i.input === undefined
				? ISSUE_REQUIRED
				: `must be a string (an id, key or URL in quotes, e.g. "123"), not ${jsonKind(i.input)}`,
	})
	.trim()
	.pipe(z.string().min(1, ISSUE_REQUIRED))
	.pipe(issueRefSchema);

export const startBody = z.object({
	source: z.enum(SOURCES).optional().meta({ description: "Default: the configured source" }),
	issue: issue.meta({ description: "Issue id, key (ENG-123) or URL" }),
});

// ── answers ─────────────────────────────────────────────────────────────────────────────────

export const approveBody = z.strictObject({
	limitUsd: z.number().positive().max(1e6).optional().meta({
		description:
			"The run's new cost limit in USD (default: what it spent plus limits.max_run_cost_usd)",
	}),
});

// The answers' types, for the API's clients (the CLI, the dashboard): defined with their schemas.
export type {
	EpicAnswer,
	EventAnswer,
	EventsAnswer,
	RunAnswer,
	RunsAnswer,
	StatsAnswer,
	StepAnswer,
} from "./answers";
