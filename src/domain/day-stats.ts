import { stepCost } from "./cost";
import { type Run, readsAllRepos, type Step } from "./run";
import { isTerminalRun, type RunStatus } from "./states";

// What the stats need of the runs created on one UTC day (docs/http-api.md › Statistics): sums,
// the samples of exact nearest-rank percentiles and the costliest runs. Kept per day, so a window
// of 30 days reads 30 of them; a recount folds runs into the same shape, so both answer alike.

/** What the stats read of a run (the store reads no more). */
export const STATS_FIELDS = [
	"runId",
	"title",
	"status",
	"createdAt",
	"finishedAt",
	"steps",
	"parentRunId",
	"closedPullRequests",
] as const;
export type StatsRun = Pick<Run, (typeof STATS_FIELDS)[number]>;

/**
 * Money in micro-USD, whole numbers: sums come out the same in any order (a day adds its runs as
 * they finish, a recount as it reads them). `unknown`: how many runs (or steps) cost an unknown sum.
 */
export interface Money {
	known: number;
	compute: number;
	unknown: number;
}

/** A repo's or provider's steps of the day. */
export interface DayGroup {
	succeeded: number;
	failed: number;
	agentMs: number;
	/** Whole seconds from the run's creation to the step's pull request, ascending. */
	timeToPr: number[];
	cost: Money;
}

/** One of the costliest runs of the day (by the known part of its cost). */
export interface CostlyRun {
	runId: string;
	title?: string;
	status: RunStatus;
	createdAt: string;
	parentRunId?: string;
	/** Micro-USD. */
	known: number;
	unknown: boolean;
}

export interface DayStats {
	/** YYYY-MM-DD (UTC) of the runs' creation. */
	day: string;
	counts: Partial<Record<RunStatus, number>>;
	/** Whole seconds from creation to the end, of succeeded and failed runs, ascending. */
	durations: number[];
	/** Whole seconds from creation to the run's first pull request (not of rounds), ascending. */
	timeToPr: number[];
	agentMs: number;
	/** Every run's cost, then the succeeded and the failed runs'. */
	cost: Money;
	succeededCost: Money;
	failedCost: Money;
	byRepo: Record<string, DayGroup>;
	byProvider: Record<string, DayGroup>;
	/** The costliest runs, at most COSTLY_RUNS. */
	costly: CostlyRun[];
	/** Pull requests of the day's runs that merged. */
	mergedPrs: number;
	/** Runs or merges were left out: the day was full (DAY_BYTES). */
	full?: boolean;
}

/** A day as it is stored: with what it counted, so a redelivered finish or merge never counts twice. */
export interface DayLedger extends DayStats {
	/** Sorted. */
	runIds: string[];
	/** Sorted. */
	prUrls: string[];
	/** About how many bytes the ids and samples take. */
	bytes: number;
}

const COSTLY_RUNS = 10;
/**
 * What a day's ids and samples may take: a DynamoDB item holds 400 KB, and the rest of the day
 * (groups, the costliest runs' titles) stays well under the other 100 KB. A run with one step
 * takes about 100 bytes: some 3,000 runs a day.
 */
export const DAY_BYTES = 300_000;
const SAMPLE_BYTES = 8;
const TITLE_CHARS = 120;

const noMoney = (): Money => ({ known: 0, compute: 0, unknown: 0 });

export const dayOf = (iso: string) => iso.slice(0, 10);

export function emptyDay(day: string): DayLedger {
	return {
		day,
		counts: {},
		durations: [],
		timeToPr: [],
		agentMs: 0,
		cost: noMoney(),
		succeededCost: noMoney(),
		failedCost: noMoney(),
		byRepo: {},
		byProvider: {},
		costly: [],
		mergedPrs: 0,
		runIds: [],
		prUrls: [],
		bytes: 0,
	};
}

/** Whole seconds from `from` to `to`; undefined without `to`. */
const seconds = (from: string, to: string | undefined) =>
	to ? Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000)) : undefined;

/** The container time of the step's last attempt (earlier attempts keep no times). */
const agentMs = (step: Step) =>
	step.launchedAt && step.finishedAt
		? Math.max(0, Date.parse(step.finishedAt) - Date.parse(step.launchedAt))
		: 0;

/** When the step's pull request appeared: when the step finished with it. */
const prAt = (step: Step) => (step.prUrl ? (step.finishedAt ?? step.report?.at) : undefined);

function moneyOf(step: Step): Money {
	const c = stepCost(step);
	return {
		known: Math.round(c.knownUsd * 1e6),
		compute: Math.round(c.computeUsd * 1e6),
		unknown: c.totalUsd === null ? 1 : 0,
	};
}

function addMoney(to: Money, m: Money): void {
	to.known += m.known;
	to.compute += m.compute;
	to.unknown += m.unknown;
}

export function sumMoney(list: readonly Money[]): Money {
	const out = noMoney();
	for (const m of list) addMoney(out, m);
	return out;
}

/** Where `value` goes in ascending `list`: the first index whose element is not below it. */
export function lowerBound<T extends string | number>(list: readonly T[], value: T): number {
	let lo = 0;
	let hi = list.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if ((list[mid] as T) < value) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

/** Inserts into an ascending list; false when it was there. */
function insertId(list: string[], value: string): boolean {
	const at = lowerBound(list, value);
	if (list[at] === value) return false;
	list.splice(at, 0, value);
	return true;
}

const hasId = (list: readonly string[], value: string) => list[lowerBound(list, value)] === value;

/** Samples are kept ascending, so a window's percentiles need no sort (src/domain/stats.ts). */
const addSample = (list: number[], value: number) => list.splice(lowerBound(list, value), 0, value);

/** Costliest first; ties by run id, so every fold ranks alike. */
const byCost = (a: CostlyRun, b: CostlyRun) =>
	b.known - a.known || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);

export function keepCostliest(list: CostlyRun[], more: readonly CostlyRun[]): CostlyRun[] {
	return [...list, ...more].sort(byCost).slice(0, COSTLY_RUNS);
}

function group(groups: Record<string, DayGroup>, name: string): DayGroup {
	if (Object.hasOwn(groups, name)) return groups[name] as DayGroup;
	const g = { succeeded: 0, failed: 0, agentMs: 0, timeToPr: [], cost: noMoney() };
	// Defined, not assigned: a repo may be named `__proto__`.
	Object.defineProperty(groups, name, { value: g, enumerable: true, writable: true });
	return g;
}

/** What one step adds to a group; a follow-up round works on a PR it did not open: no time to PR. */
function addStep(g: DayGroup, run: StatsRun, step: Step, money: Money): void {
	if (step.status === "succeeded") g.succeeded++;
	if (step.status === "failed") g.failed++;
	g.agentMs += agentMs(step);
	addMoney(g.cost, money);
	const toPr = run.parentRunId ? undefined : seconds(run.createdAt, prAt(step));
	if (toPr !== undefined) addSample(g.timeToPr, toPr);
}

/**
 * Counts the run in its day, once: false when it was counted already, or could not be (the day is
 * full; then `full` says so). Each step's cost goes to its repo (the planning step's to no repo)
 * and to its provider, the one that ran its last attempt.
 */
export function addRun(day: DayLedger, run: StatsRun): boolean {
	if (hasId(day.runIds, run.runId)) return false;
	// Its duration, its time to PR, and each step's time to PR in its repo and its provider.
	const bytes = run.runId.length + 3 + (2 + 2 * run.steps.length) * SAMPLE_BYTES;
	if (day.bytes + bytes > DAY_BYTES) {
		if (day.full) return false;
		day.full = true;
		return true;
	}
	insertId(day.runIds, run.runId);
	day.bytes += bytes;
	day.counts[run.status] = (day.counts[run.status] ?? 0) + 1;
	if (run.status === "succeeded" || run.status === "failed") {
		const d = seconds(run.createdAt, run.finishedAt);
		if (d !== undefined) addSample(day.durations, d);
	}
	const firstPr = run.parentRunId
		? undefined
		: run.steps
				.map((st) => seconds(run.createdAt, prAt(st)))
				.filter((s): s is number => s !== undefined)
				.sort((a, b) => a - b)[0];
	if (firstPr !== undefined) addSample(day.timeToPr, firstPr);
	const cost = noMoney();
	for (const step of run.steps) {
		const money = moneyOf(step);
		addMoney(cost, money);
		day.agentMs += agentMs(step);
		if (!readsAllRepos(step)) addStep(group(day.byRepo, step.repo), run, step, money);
		if (step.provider) addStep(group(day.byProvider, step.provider), run, step, money);
	}
	const runMoney = { ...cost, unknown: cost.unknown ? 1 : 0 };
	addMoney(day.cost, runMoney);
	if (run.status === "succeeded") addMoney(day.succeededCost, runMoney);
	if (run.status === "failed") addMoney(day.failedCost, runMoney);
	day.costly = keepCostliest(day.costly, [
		{
			runId: run.runId,
			...(run.title ? { title: run.title.slice(0, TITLE_CHARS) } : {}),
			status: run.status,
			createdAt: run.createdAt,
			...(run.parentRunId ? { parentRunId: run.parentRunId } : {}),
			known: cost.known,
			unknown: cost.unknown > 0,
		},
	]);
	return true;
}

/** Counts a merged pull request of the day's runs, once (false when counted, or the day is full). */
export function addMerge(day: DayLedger, prUrl: string): boolean {
	if (hasId(day.prUrls, prUrl)) return false;
	const bytes = prUrl.length + 3;
	if (day.bytes + bytes > DAY_BYTES) {
		if (day.full) return false;
		day.full = true;
		return true;
	}
	insertId(day.prUrls, prUrl);
	day.bytes += bytes;
	day.mergedPrs++;
	return true;
}

/**
 * What the store counts when a run finishes, and what a recount does with every run it reads: its
 * merged pull requests (whatever its status), and the run itself once it ended. True if it changed.
 */
export function foldRun(day: DayLedger, run: StatsRun): boolean {
	let changed = false;
	for (const pr of run.closedPullRequests ?? [])
		if (pr.merged) changed = addMerge(day, pr.url) || changed;
	if (isTerminalRun(run.status)) changed = addRun(day, run) || changed;
	return changed;
}

/** Runs by the UTC day (YYYY-MM-DD) they were created. */
export function runsByDay<T extends Pick<StatsRun, "createdAt">>(
	runs: readonly T[],
): Map<string, T[]> {
	const days = new Map<string, T[]>();
	for (const run of runs) {
		const day = dayOf(run.createdAt);
		const list = days.get(day);
		if (list) list.push(run);
		else days.set(day, [run]);
	}
	return days;
}

/** Runs folded into their days (by `fold`: as the stored days would hold them, by default). */
export function foldRuns(
	runs: readonly StatsRun[],
	fold: (day: DayLedger, run: StatsRun) => boolean = foldRun,
): DayLedger[] {
	return [...runsByDay(runs)].map(([day, list]) => {
		const ledger = emptyDay(day);
		for (const run of list) fold(ledger, run);
		return ledger;
	});
}

/** The stored days without what they counted (what the stats read). */
export function statsPart(ledger: DayLedger): DayStats {
	const { runIds: _runs, prUrls: _prs, bytes: _bytes, ...stats } = ledger;
	return stats;
}
