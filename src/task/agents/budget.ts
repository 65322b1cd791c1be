import { agentRunCost, type PriceTable } from "../../domain/cost";
import type { StepBudget } from "../../domain/run";
import type { AgentRunUsage } from "../../domain/usage";
import { BudgetStop } from "../attempt/failure";
import type { Timeline } from "../attempt/timeline";

// The run's budget as the task watches it (README › Cost and budgets): what the run had spent at
// launch, plus the model spend of this attempt's agent runs, the running one included. Compute is
// the pipeline's to price.

/**
 * What an agent run cost as far as the watch can tell: the larger of the cost its CLI reported and
 * its tokens at the configured or list price. A CLI's own figure can be low (its price table, or a
 * summary that disagrees with what it streamed); a budget that trusted the lower one could be
 * overrun, one that takes the higher only stops early. Undefined when neither is known.
 */
export function watchedCost(run: AgentRunUsage, prices: PriceTable): number | undefined {
	const u = run.usage;
	if (!u) return undefined;
	const priced = agentRunCost({ ...run, usage: { ...u, costUsd: undefined } }, prices).usd;
	if (u.costUsd === undefined) return priced ?? undefined;
	return Math.max(u.costUsd, priced ?? 0);
}

/** The attempt's watch over the run's budget (a step launched with one: `Step.budget`). */
export class BudgetWatch {
	private readonly unpriced = new Set<string>();
	private readonly notes: Promise<unknown>[] = [];

	constructor(
		private readonly budget: StepBudget,
		private readonly prices: PriceTable,
		/** The attempt's agent runs so far (`Attempt.agentRuns`). */
		private readonly runs: readonly AgentRunUsage[],
		private readonly timeline: Timeline,
	) {}

	/** What the run has spent: at launch, plus the attempt's agent runs and `current`, as far as known. */
	spent(current?: AgentRunUsage): number {
		let spent = this.budget.spentUsd;
		for (const run of current ? [...this.runs, current] : this.runs) spent += this.cost(run);
		return spent;
	}

	/** Before an agent run: throws BudgetStop when the run has already spent its limit. */
	before(): void {
		const spent = this.spent();
		if (spent >= this.budget.limitUsd) throw this.stop(spent);
	}

	/** While an agent runs: whether its usage so far took the run past the limit. */
	passed(current: AgentRunUsage): boolean {
		return this.spent(current) > this.budget.limitUsd;
	}

	stop(spent = this.spent()): BudgetStop {
		return new BudgetStop({ spentUsd: spent, limitUsd: this.budget.limitUsd });
	}

	/** The notes written meanwhile (a usage callback cannot wait for them). */
	async settle(): Promise<void> {
		await Promise.all(this.notes.splice(0));
	}

	/** A run's known cost; a model without a price is said once, and counts nothing. */
	private cost(run: AgentRunUsage): number {
		const usd = watchedCost(run, this.prices);
		if (usd !== undefined || !run.usage) return usd ?? 0;
		const name = run.servedModel ? `${run.model} (${run.servedModel})` : run.model;
		if (!this.unpriced.has(name)) {
			this.unpriced.add(name);
			this.notes.push(
				this.timeline.add(
					"agent.unpriced",
					`the budget cannot watch ${name} because it has no price (set pricing in the config): only a cost the agent reports itself counts`,
					{ provider: run.model, ...(run.servedModel ? { servedModel: run.servedModel } : {}) },
				),
			);
		}
		return 0;
	}
}
