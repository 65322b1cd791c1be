import { describe, expect, it } from "vitest";
import { readPlan, validatePlan } from "./plan";

const repos = ["api", "web", "docs"];

describe("plan validation", () => {
	it("accepts a valid plan and sorts it by order", () => {
		const v = validatePlan(
			{
				steps: [
					{ repo: "web", scope: "UI", order: 2 },
					{ repo: "api", scope: "endpoint", order: 1 },
				],
			},
			repos,
		);
		expect(v).toEqual({
			ok: true,
			plan: {
				steps: [
					{ repo: "api", scope: "endpoint", order: 1 },
					{ repo: "web", scope: "UI", order: 2 },
				],
			},
		});
	});

	it("allows equal orders (steps that may run together)", () => {
		const v = validatePlan(
			{
				steps: [
					{ repo: "api", scope: "a", order: 1 },
					{ repo: "web", scope: "b", order: 1 },
				],
			},
			repos,
		);
		expect(v.ok).toBe(true);
	});

	it("names unknown repos, duplicates and gaps in the order", () => {
		const v = validatePlan(
			{
				steps: [
					{ repo: "api", scope: "a", order: 1 },
					{ repo: "mobile", scope: "b", order: 3 },
					{ repo: "api", scope: "c", order: 3 },
				],
			},
			repos,
		);
		expect(v).toEqual({
			ok: false,
			errors: [
				'steps.1.repo: "mobile" is not a configured repo (api, web, docs)',
				'steps.2.repo: "api" appears more than once',
				"orders must be contiguous from 1: found 1, 3 (missing 2)",
			],
		});
	});

	it("reports shape errors with their path", () => {
		expect(validatePlan({ steps: [] }, repos)).toEqual({
			ok: false,
			errors: ["steps: the plan has no steps"],
		});
		expect(validatePlan({ steps: [{ repo: "api", order: 0 }] }, repos)).toMatchObject({
			ok: false,
			errors: expect.arrayContaining([
				expect.stringMatching(/^steps\.0\.scope: /),
				"steps.0.order: order starts at 1",
			]),
		});
		expect(readPlan("{nope", repos)).toMatchObject({
			ok: false,
			errors: [expect.stringMatching(/is not valid JSON/)],
		});
	});
});
