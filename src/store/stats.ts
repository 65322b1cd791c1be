import type { DayStats, StatsRun } from "../domain/day-stats";

/**
 * The stats' days (docs/http-api.md › Statistics): what the finished runs created on a UTC day add
 * up to, kept as they finish, so a window reads one item a day instead of every run.
 */
export interface StatsStore {
	/** Counts a finished run (and its merged pull requests) in the day it was created, once. */
	countRun(run: StatsRun): Promise<void>;
	/** `countRun` for many runs at once: one write a day (a rebuild, a bench's seeding). */
	countRuns(runs: readonly StatsRun[]): Promise<void>;
	/** Counts a merged pull request in the day its run was created, once. */
	countMerge(run: Pick<StatsRun, "createdAt">, prUrl: string): Promise<void>;
	/** The days (YYYY-MM-DD) that have anything counted; a day without is left out. */
	dayStats(days: readonly string[]): Promise<DayStats[]>;
}
