import { foldRuns, type StatsRun } from "../../src/domain/day-stats";
import { isTerminalRun } from "../../src/domain/states";
import { type RunStats, statsOf } from "../../src/domain/stats";

/**
 * A full recount: the runs folded into days as the store keeps them, the active ones as they are.
 * What the stats kept day by day must equal (the tests; bench/api.ts).
 */
export function runStats(runs: readonly StatsRun[]): RunStats {
	return statsOf(
		foldRuns(runs),
		runs.filter((r) => !isTerminalRun(r.status)),
	);
}
