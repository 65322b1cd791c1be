import type { PlanStep } from "../../../src/domain/plan";

// Directives for the fake agent (fake-agent.mjs), as a test writes them into an issue's description.

/** The plan the fake agent answers a planning prompt with. */
export const planDirective = (steps: PlanStep[]) => `lisa-fake: plan=${JSON.stringify({ steps })}`;
