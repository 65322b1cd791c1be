import * as z from "zod";

// Multi-repo plans (docs/multi-repo.md › Multi-repo runs): the planning agent's `.lisa-plan.json`,
// validated before any step runs — the original never checked it against the configured repos.

export const PLAN_FILE = ".lisa-plan.json";

export const planSchema = z.object({
	steps: z
		.array(
			z.object({
				repo: z.string().trim().min(1, "repo is empty"),
				scope: z.string().trim().min(1, "scope is empty").max(4000),
				order: z.number().int().min(1, "order starts at 1"),
			}),
		)
		.min(1, "the plan has no steps"),
});
export type Plan = z.infer<typeof planSchema>;
export type PlanStep = Plan["steps"][number];

export type PlanVerdict = { ok: true; plan: Plan } | { ok: false; errors: string[] };

/**
 * Shape (zod), every repo configured, no repo twice, orders contiguous from 1 (equal orders may run
 * together). Returns the plan sorted by order, or every reason it is invalid.
 */
export function validatePlan(raw: unknown, repos: readonly string[]): PlanVerdict {
	const parsed = planSchema.safeParse(raw);
	if (!parsed.success)
		return {
			ok: false,
			errors: parsed.error.issues.map((i) => `${i.path.join(".") || "plan"}: ${i.message}`),
		};
	const errors: string[] = [];
	const seen = new Set<string>();
	for (const [i, step] of parsed.data.steps.entries()) {
		if (!repos.includes(step.repo))
			errors.push(`steps.${i}.repo: "${step.repo}" is not a configured repo (${repos.join(", ")})`);
		if (seen.has(step.repo)) errors.push(`steps.${i}.repo: "${step.repo}" appears more than once`);
		seen.add(step.repo);
	}
	const orders = [...new Set(parsed.data.steps.map((s) => s.order))].sort((a, b) => a - b);
	orders.forEach((order, i) => {
		if (order !== i + 1)
			errors.push(
				`orders must be contiguous from 1: found ${orders.join(", ")} (missing ${i + 1})`,
			);
	});
	if (errors.length) return { ok: false, errors: [...new Set(errors)] };
	return {
		ok: true,
		plan: { steps: [...parsed.data.steps].sort((a, b) => a.order - b.order) },
	};
}

/** Parses the plan file's text; JSON errors become plan errors the agent can be shown. */
export function readPlan(text: string, repos: readonly string[]): PlanVerdict {
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (err) {
		return { ok: false, errors: [`${PLAN_FILE} is not valid JSON: ${(err as Error).message}`] };
	}
	return validatePlan(raw, repos);
}
