import type { Run, Step } from "../domain/run";
import { RUN_STATUSES, type RunStatus } from "../domain/states";

// What a team asks of Lisa over a window of runs: how many, how often they succeed, how long an
// issue waits for its pull request, and how much agent time that took — per repo and per provider.

/** Median and 90th percentile (nearest rank) in seconds; null without samples. */
export interface Spread {
	medianSeconds: number | null;
	p90Seconds: number | null;
}

export interface GroupStats {
	/** Steps finished (succeeded or failed) in the group. */
	finished: number;
	succeeded: number;
	failed: number;
	successRate: number | null;
	/** From the run's creation to this group's pull request. */
	timeToPr: Spread;
	/** Time the agent containers ran (each step's last attempt): what Fargate bills. */
	agentSeconds: number;
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
	byRepo: Record<string, GroupStats>;
	byProvider: Record<string, GroupStats>;
}

/** The nearest-rank percentile of ascending `sorted` (p in (0, 1]). */
export function percentile(sorted: readonly number[], p: number): number | null {
	if (sorted.length === 0) return null;
	return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? null;
}

function spread(samples: number[]): Spread {
	const sorted = [...samples].sort((a, b) => a - b);
	return { medianSeconds: percentile(sorted, 0.5), p90Seconds: percentile(sorted, 0.9) };
}

const seconds = (from: string, to: string | undefined) =>
	to ? Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000) : undefined;

const rate = (succeeded: number, failed: number) =>
	succeeded + failed ? succeeded / (succeeded + failed) : null;

/** The container time of the step's last attempt (earlier attempts keep no times). */
const agentSeconds = (step: Step) =>
	step.launchedAt ? (seconds(step.launchedAt, step.finishedAt) ?? 0) : 0;

/** When the step's pull request appeared: when the step finished with it. */
const prAt = (step: Step) => (step.prUrl ? (step.finishedAt ?? step.report?.at) : undefined);

class Group {
	succeeded = 0;
	failed = 0;
	agentSeconds = 0;
	readonly timeToPr: number[] = [];

	add(run: StatsRun, step: Step) {
		if (step.status === "succeeded") this.succeeded++;
		if (step.status === "failed") this.failed++;
		this.agentSeconds += agentSeconds(step);
		const toPr = run.parentRunId ? undefined : seconds(run.createdAt, prAt(step));
		if (toPr !== undefined) this.timeToPr.push(toPr);
	}

	view(): GroupStats {
		return {
			finished: this.succeeded + this.failed,
			succeeded: this.succeeded,
			failed: this.failed,
			successRate: rate(this.succeeded, this.failed),
			timeToPr: spread(this.timeToPr),
			agentSeconds: Math.round(this.agentSeconds),
		};
	}
}

const grouped = (groups: Map<string, Group>) =>
	Object.fromEntries(
		[...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, g]) => [k, g.view()]),
	);

/** What the stats read of a run (the store reads no more). */
export const STATS_FIELDS = ["status", "createdAt", "finishedAt", "steps", "parentRunId"] as const;
type StatsRun = Pick<Run, (typeof STATS_FIELDS)[number]>;

export function runStats(runs: readonly StatsRun[]): RunStats {
	const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
	const durations: number[] = [];
	const toPr: number[] = [];
	let agent = 0;
	const byRepo = new Map<string, Group>();
	const byProvider = new Map<string, Group>();
	const group = (map: Map<string, Group>, name: string) => {
		const g = map.get(name) ?? new Group();
		map.set(name, g);
		return g;
	};
	for (const run of runs) {
		counts[run.status]++;
		if (run.status === "succeeded" || run.status === "failed") {
			const d = seconds(run.createdAt, run.finishedAt);
			if (d !== undefined) durations.push(d);
		}
		// A follow-up round works on a pull request it did not open: it has no time to a PR.
		const firstPr = run.parentRunId
			? undefined
			: run.steps
					.map((st) => seconds(run.createdAt, prAt(st)))
					.filter((s): s is number => s !== undefined)
					.sort((a, b) => a - b)[0];
		if (firstPr !== undefined) toPr.push(firstPr);
		for (const step of run.steps) {
			agent += agentSeconds(step);
			if (step.kind !== "plan") group(byRepo, step.repo).add(run, step);
			if (step.provider) group(byProvider, step.provider).add(run, step);
		}
	}
	return {
		total: runs.length,
		counts,
		successRate: rate(counts.succeeded, counts.failed),
		duration: spread(durations),
		timeToPr: spread(toPr),
		agentSeconds: Math.round(agent),
		byRepo: grouped(byRepo),
		byProvider: grouped(byProvider),
	};
}
