import { agentRunCost, type PriceTable } from "../../domain/cost";
import type { StepBudget } from "../../domain/run";
import type { AgentRunUsage } from "../../domain/usage";
import { BudgetStop } from "../report/failure";
import type { Timeline } from "../report/timeline";

// The run's budget as the task watches it (docs/cost.md › Cost and budgets): what the run had spent
// at launch, plus the model spend of this attempt's agent runs, the running one included, as the
// pipeline will count it (`agentRunCost`). Compute is the pipeline's to price.

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

	/** What the run has spent as budgets count it: at launch, plus the attempt's runs and `current`. */
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

	/** Before a request to the model (the broker): whether the run has spent its limit. */
	reached(current: AgentRunUsage): boolean {
		return this.spent(current) >= this.budget.limitUsd;
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

	/** A run's spend as budgets count it (`agentRunCost`); a model without a price is said once. */
	private cost(run: AgentRunUsage): number {
		const c = agentRunCost(run, this.prices);
		if (c.usd !== null || !run.usage) return c.spentUsd;
		const name = run.servedModel ? `${run.model} (${run.servedModel})` : run.model;
		if (!this.unpriced.has(name)) {
			this.unpriced.add(name);
			this.notes.push(
				this.timeline.add(
					"agent.unpriced",
					`${name} has no price (set pricing in the config): the budget counts its tokens at the dearest price Lisa knows, or the cost its CLI reports if that is more`,
					{ provider: run.model, ...(run.servedModel ? { servedModel: run.servedModel } : {}) },
				),
			);
		}
		return c.spentUsd;
	}
}
