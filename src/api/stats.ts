import { foldRuns, STATS_FIELDS } from "../domain/day-stats";
import { ACTIVE_RUN_STATUSES } from "../domain/states";
import { type RunStats, statsOf } from "../domain/stats";
import type { Store } from "../store";

// `GET /api/stats` over a window [since, until): whole UTC days from the days the store keeps as
// runs finish, a part day at either edge recounted from its runs, the active runs as they are.

const DAY = 86_400_000;
/** The default window: this many whole UTC days, today's included. */
const STATS_WINDOW_DAYS = 30;
/** How many runs one part day's recount (or one rebuild) reads at most. */
const MAX_RUNS = 5000;
/** How many runs of each active status the stats read at most. */
const MAX_ACTIVE = 1000;
const FAR_FUTURE = "9999-12-31T23:59:59.999Z";

const iso = (ms: number) => new Date(ms).toISOString();
const floorDay = (ms: number) => Math.floor(ms / DAY) * DAY;

/** 00:00 UTC of the day STATS_WINDOW_DAYS - 1 days before `until`'s. */
export const defaultSince = (until: string) =>
	iso(floorDay(Date.parse(until)) - (STATS_WINDOW_DAYS - 1) * DAY);

export interface WindowPlan {
	/** Whole days (YYYY-MM-DD), read from the store's days. */
	days: string[];
	/** Part days, recounted from their runs. */
	recount: { since: string; until: string }[];
}

/**
 * Which days of [since, until) the store's days answer whole, and which parts are recounted. No run
 * is created after `now`, so a window reaching it takes today whole.
 */
export function planWindow(since: string, until: string, now: string): WindowPlan {
	const s = Date.parse(since);
	const u = Date.parse(until);
	const end = u >= Date.parse(now) ? Math.max(floorDay(Date.parse(now)) + DAY, s) : u;
	const first = Math.ceil(s / DAY) * DAY;
	const last = floorDay(end);
	if (first >= last) return { days: [], recount: s < end ? [{ since, until: iso(end) }] : [] };
	const days: string[] = [];
	for (let d = first; d < last; d += DAY) days.push(iso(d).slice(0, 10));
	const recount = [];
	if (s < first) recount.push({ since, until: iso(first) });
	if (last < end) recount.push({ since: iso(last), until: iso(end) });
	return { days, recount };
}

/** The stats of the runs created in [since, until); `truncated` when some were left out. */
export async function windowStats(
	store: Store,
	since: string,
	until: string,
	now: string,
): Promise<{ stats: RunStats; truncated: boolean }> {
	const plan = planWindow(since, until, now);
	const [stored, parts, active] = await Promise.all([
		store.dayStats(plan.days),
		Promise.all(
			plan.recount.map((p) => store.runsCreatedBetween(p.since, p.until, MAX_RUNS, STATS_FIELDS)),
		),
		Promise.all(
			ACTIVE_RUN_STATUSES.map((s) =>
				store.runsByStatus(s, { after: since, before: FAR_FUTURE }, MAX_ACTIVE),
			),
		),
	]);
	// A part day's active runs are counted from the status reads, as every other day's.
	const days = [...stored, ...foldRuns(parts.flatMap((p) => p.runs))];
	const live = active.flat().filter((r) => r.createdAt >= since && r.createdAt < until);
	const stats = statsOf(days, live);
	return {
		stats,
		truncated:
			stats.full || parts.some((p) => p.truncated) || active.some((a) => a.length >= MAX_ACTIVE),
	};
}

/**
 * Counts the runs created in [since, until) in their days: those that finished before the days
 * were kept. Idempotent: a run or merge counted already is not counted again.
 */
export async function rebuildDayStats(
	store: Store,
	since: string,
	until: string,
): Promise<{ runs: number; truncated: boolean }> {
	const { runs, truncated } = await store.runsCreatedBetween(since, until, MAX_RUNS, STATS_FIELDS);
	await store.countRuns(runs);
	return { runs: runs.length, truncated };
}
