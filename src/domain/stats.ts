import {
	addRun,
	type CostlyRun,
	type DayGroup,
	type DayStats,
	foldRuns,
	keepCostliest,
	lowerBound,
	type Money,
	type StatsRun,
	sumMoney,
} from "./day-stats";
import { RUN_STATUSES, type RunStatus } from "./states";

// What a team asks of Lisa over a window of runs: how many, how often they succeed, how long an
// issue waits for its pull request, what it cost and where the money went — per repo, provider and
// day. One path from days (stored, or folded from runs) to the answer, so both agree.

/** Median and 90th percentile (nearest rank) in seconds; null without samples. */
interface Spread {
	medianSeconds: number | null;
	p90Seconds: number | null;
}

/** A sum in USD; `totalUsd` is null when some of it is unknown (then `knownUsd` is a floor). */
interface CostSum {
	totalUsd: number | null;
	knownUsd: number;
}

interface GroupStats {
	/** Steps finished (succeeded or failed) in the group. */
	finished: number;
	succeeded: number;
	failed: number;
	successRate: number | null;
	/** From the run's creation to this group's pull request. */
	timeToPr: Spread;
	/** Time the agent containers ran (each step's last attempt): what Fargate bills. */
	agentSeconds: number;
	/** What the group's steps cost. */
	cost: CostSum;
}

/** One UTC day of the window: what the dashboard's charts plot (docs/dashboard.md › Dashboard). */
interface DaySummary {
	runs: number;
	succeeded: number;
	failed: number;
	cancelled: number;
	successRate: number | null;
	/** From creation to the first pull request, of the day's runs (its samples, not a mean of means). */
	timeToPr: Spread;
	cost: CostSum;
}

interface ExpensiveRun {
	runId: string;
	title?: string;
	status: RunStatus;
	createdAt: string;
	parentRunId?: string;
	totalUsd: number | null;
	knownUsd: number;
}

export interface RunStats {
	total: number;
	counts: Record<RunStatus, number>;
	/** succeeded / (succeeded + failed); cancelled runs count for neither. */
	successRate: number | null;
	/** From creation to the end, of finished runs. */
	duration: Spread;
	/** From creation to the run's first pull request. */
	timeToPr: Spread;
	agentSeconds: number;
	cost: CostSum & { modelUsd: number | null; computeUsd: number; unknownRuns: number };
	/** The succeeded runs' cost over their number. */
	costPerSucceededRun: number | null;
	/** Every run's cost (failures and rounds too) over the pull requests that merged. */
	costPerMergedPr: number | null;
	mergedPrs: number;
	/** The failed runs' share of the cost. */
	failedSpendShare: number | null;
	byRepo: Record<string, GroupStats>;
	byProvider: Record<string, GroupStats>;
	byDay: Record<string, DaySummary>;
	mostExpensive: ExpensiveRun[];
	/** Some day was full and left runs out. */
	full: boolean;
}

/**
 * The nearest-rank percentile of the union of ascending lists of whole numbers, without merging
 * them: the least whole number that at least the rank's samples do not exceed (a sample itself).
 */
export function percentileOf(lists: readonly (readonly number[])[], p: number): number | null {
	let n = 0;
	let lo = Number.POSITIVE_INFINITY;
	let hi = Number.NEGATIVE_INFINITY;
	for (const l of lists) {
		if (!l.length) continue;
		n += l.length;
		lo = Math.min(lo, l[0] as number);
		hi = Math.max(hi, l[l.length - 1] as number);
	}
	if (!n) return null;
	const rank = Math.max(1, Math.ceil(p * n));
	while (lo < hi) {
		const mid = Math.floor((lo + hi) / 2);
		let atMost = 0;
		for (const l of lists) atMost += lowerBound(l, mid + 1);
		if (atMost >= rank) hi = mid;
		else lo = mid + 1;
	}
	return lo;
}

const spread = (lists: readonly (readonly number[])[]): Spread => ({
	medianSeconds: percentileOf(lists, 0.5),
	p90Seconds: percentileOf(lists, 0.9),
});

const rate = (succeeded: number, failed: number) =>
	succeeded + failed ? succeeded / (succeeded + failed) : null;

const usd = (micro: number) => micro / 1e6;

const costSum = (m: Money): CostSum => ({
	totalUsd: m.unknown ? null : usd(m.known),
	knownUsd: usd(m.known),
});

/** Null when the sum is unknown or there is nothing to divide by. */
const per = (m: Money, n: number) => (m.unknown || !n ? null : usd(m.known) / n);

function groups(days: readonly DayStats[], of: (d: DayStats) => Record<string, DayGroup>) {
	const names = [...new Set(days.flatMap((d) => Object.keys(of(d))))].sort((a, b) =>
		a.localeCompare(b),
	);
	return Object.fromEntries(
		names.map((name): [string, GroupStats] => {
			const gs = days.flatMap((d) => (Object.hasOwn(of(d), name) ? [of(d)[name] as DayGroup] : []));
			const succeeded = gs.reduce((n, g) => n + g.succeeded, 0);
			const failed = gs.reduce((n, g) => n + g.failed, 0);
			return [
				name,
				{
					finished: succeeded + failed,
					succeeded,
					failed,
					successRate: rate(succeeded, failed),
					timeToPr: spread(gs.map((g) => g.timeToPr)),
					agentSeconds: Math.round(gs.reduce((n, g) => n + g.agentMs, 0) / 1000),
					cost: costSum(sumMoney(gs.map((g) => g.cost))),
				},
			];
		}),
	);
}

const countOf = (d: DayStats, s: RunStatus) => d.counts[s] ?? 0;

function byDay(days: readonly DayStats[]): Record<string, DaySummary> {
	const names = [...new Set(days.map((d) => d.day))].sort();
	return Object.fromEntries(
		names.map((name): [string, DaySummary] => {
			const ds = days.filter((d) => d.day === name);
			const count = (s: RunStatus) => ds.reduce((n, d) => n + countOf(d, s), 0);
			const succeeded = count("succeeded");
			const failed = count("failed");
			return [
				name,
				{
					runs: RUN_STATUSES.reduce((n, s) => n + count(s), 0),
					succeeded,
					failed,
					cancelled: count("cancelled"),
					successRate: rate(succeeded, failed),
					timeToPr: spread(ds.map((d) => d.timeToPr)),
					cost: costSum(sumMoney(ds.map((d) => d.cost))),
				},
			];
		}),
	);
}

const expensive = (r: CostlyRun): ExpensiveRun => ({
	runId: r.runId,
	...(r.title ? { title: r.title } : {}),
	status: r.status,
	createdAt: r.createdAt,
	...(r.parentRunId ? { parentRunId: r.parentRunId } : {}),
	totalUsd: r.unknown ? null : usd(r.known),
	knownUsd: usd(r.known),
});

/**
 * The stats of finished runs kept by day and of the active runs (read as they are now): any mix of
 * stored days and days folded from runs, several for one day included.
 */
export function statsOf(stored: readonly DayStats[], active: readonly StatsRun[] = []): RunStats {
	// Active runs are counted as they are now (foldRun counts only ended ones).
	const days = [...stored, ...foldRuns(active, addRun)];
	const counts = Object.fromEntries(
		RUN_STATUSES.map((s) => [s, days.reduce((n, d) => n + countOf(d, s), 0)]),
	) as Record<RunStatus, number>;
	const cost = sumMoney(days.map((d) => d.cost));
	const failedCost = sumMoney(days.map((d) => d.failedCost));
	const mergedPrs = days.reduce((n, d) => n + d.mergedPrs, 0);
	return {
		total: RUN_STATUSES.reduce((n, s) => n + counts[s], 0),
		counts,
		successRate: rate(counts.succeeded, counts.failed),
		duration: spread(days.map((d) => d.durations)),
		timeToPr: spread(days.map((d) => d.timeToPr)),
		agentSeconds: Math.round(days.reduce((n, d) => n + d.agentMs, 0) / 1000),
		cost: {
			...costSum(cost),
			modelUsd: cost.unknown ? null : usd(cost.known - cost.compute),
			computeUsd: usd(cost.compute),
			unknownRuns: cost.unknown,
		},
		costPerSucceededRun: per(sumMoney(days.map((d) => d.succeededCost)), counts.succeeded),
		costPerMergedPr: per(cost, mergedPrs),
		mergedPrs,
		failedSpendShare:
			cost.unknown || failedCost.unknown || !cost.known ? null : failedCost.known / cost.known,
		byRepo: groups(days, (d) => d.byRepo),
		byProvider: groups(days, (d) => d.byProvider),
		byDay: byDay(days),
		mostExpensive: days
			.reduce<CostlyRun[]>((top, d) => keepCostliest(top, d.costly), [])
			.map(expensive),
		full: days.some((d) => d.full),
	};
}
