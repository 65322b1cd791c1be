import { describe, expect, it } from "vitest";
import { newStep, planStep } from "./run";
import { stepLabel, stepNumber } from "./step-label";

describe("a step's number", () => {
	const planned = [planStep(0), newStep(1, "api"), newStep(2, "web")];
	it("is 'plan' for the planning step and counts the changes from 1 after it", () => {
		expect(planned.map((s) => stepNumber(planned, s.index))).toEqual(["plan", "1", "2"]);
		expect(planned.map((s) => stepLabel(planned, s.index))).toEqual([
			"plan",
			"step 1 (api)",
			"step 2 (web)",
		]);
	});
	it("names an epic's phases and counts no repository for them", () => {
		const epic = [
			{ ...newStep(0, "*"), kind: "research" as const },
			{ ...newStep(1, "*"), kind: "epic_plan" as const },
		];
		expect(epic.map((s) => stepLabel(epic, s.index))).toEqual(["research", "plan"]);
		expect(stepLabel([...epic, newStep(2, "api")], 2)).toBe("step 1 (api)");
	});
	it("counts from 1 without a plan too", () => {
		const single = [newStep(0, "api")];
		expect(stepLabel(single, 0)).toBe("step 1 (api)");
	});
	it("names a step the list does not hold by its index counted from 1", () => {
		expect(stepLabel([], 4)).toBe("step 5");
	});
});
