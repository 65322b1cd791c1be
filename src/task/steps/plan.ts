import { PLAN_FILE, type Plan, type PlanVerdict, readPlan } from "../../domain/plan";
import { redact } from "../../domain/redact";
import { type Attempt, runInputs } from "../context/attempt";
import { buildPlanningPrompt } from "../prompts/prompt";
import type { PlanningWorkspace } from "./planning-workspace";
import { runReadOnlyPhase } from "./read-only-phase";

/** An invalid plan is shown to the agent once; the second invalid plan fails the step. */
const PLAN_TRIES = 2;

/**
 * The planning step of a multi-repo run (docs/multi-repo.md › Multi-repo runs): every configured
 * repo checked out at its base, the agent asked for `.lisa-plan.json` only, the plan validated (one
 * retry with the errors). Nothing of this workspace is ever pushed: the checkouts are detached and
 * thrown away.
 */
export async function executePlan(a: Attempt): Promise<{ plan: Plan; provider: string }> {
	const { config, issue } = runInputs(a.run, a.req.stepIndex);
	const names = config.repos.map((r) => r.name);
	const { value: plan, provider } = await runReadOnlyPhase(a, {
		purpose: "planning",
		checkedOutFor: "planning",
		tries: PLAN_TRIES,
		files: [PLAN_FILE],
		prompt: (place, repos, _n, problems) =>
			buildPlanningPrompt({ issue, repos, planFile: place.file(PLAN_FILE), retryErrors: problems }),
		check: async (place) => {
			const verdict = await readPlanFile(place, names);
			if (!verdict.ok) return { ok: false, problems: verdict.errors };
			// The scopes are the agent's words: they go to the run, the tracker and the next prompts.
			const steps = verdict.plan.steps.map((s) => ({
				...s,
				scope: redact(s.scope, a.deps.secrets),
			}));
			return { ok: true, value: { steps } };
		},
		accepted: (value, n) => ["plan.valid", `plan (try ${n}): ${planText(value)}`, { plan: value }],
		rejected: (errors, n, again) => [
			"plan.invalid",
			`invalid plan (try ${n}): ${errors.join("; ")}${again ? "; asking the agent again with these errors" : ""}`,
			{ errors },
		],
		failure: (tries) =>
			`the planning agent wrote an invalid plan ${PLAN_TRIES} times: ${tries
				.map((errors, i) => `try ${i + 1}: ${errors.join("; ")}`)
				.join(" | ")}`,
	});
	return { plan, provider };
}

const planText = (plan: Plan) => plan.steps.map((s) => `${s.repo} (order ${s.order})`).join(", ");

async function readPlanFile(
	place: PlanningWorkspace,
	repos: readonly string[],
): Promise<PlanVerdict> {
	const file = await place.read(PLAN_FILE, 1024 * 1024);
	if ("text" in file) return readPlan(file.text, repos);
	return {
		ok: false,
		errors: ["error" in file ? file.error : `the agent did not write ${PLAN_FILE}`],
	};
}
