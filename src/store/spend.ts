/** What was spent on one UTC day (YYYY-MM-DD): in all, and per repository. */
interface DaySpend {
	totalUsd: number;
	byRepo: Record<string, number>;
}

/**
 * The daily budget's ledger (docs/cost.md › Cost and budgets): what the attempts that ended a day
 * cost.
 */
export interface SpendStore {
	/** Adds an attempt's cost to its day, once per `key` (a redelivered report never counts twice). */
	addSpend(day: string, key: string, usd: number, repo: string): Promise<void>;
	spentOn(day: string): Promise<DaySpend>;
}
