import type { RepoConfig } from "../../config/schema";
import { type GateName, gateProblems, type WorkFacts } from "../../domain/gates";
import { gateLesson } from "../../domain/guardrails";
import { lastLines } from "../../domain/redact";
import type { Problem } from "../prompts/prompt";
import { StepFailure } from "../report/failure";
import type { Timeline } from "../report/timeline";
import type { AgentUser } from "../sandbox/process";
import type { Work, Workspace } from "../sandbox/workspace";
import { describeFailure, runCommands } from "./commands";
import { checkManifest } from "./manifest";

export interface CheckProblem extends Problem {
	kind: "gate" | "validation";
	/** The gate that failed (gate problems). */
	gate?: GateName;
	/** The problem in Lisa's words only, for the repo's guardrails. */
	lesson: string;
}

/** The problems as one line each, with the end of any command output: the step's error. */
export function problemsText(problems: readonly CheckProblem[]): string {
	return problems
		.map((p) => (p.output ? `${p.summary}: ${lastLines(p.output)}` : p.summary))
		.join("; ");
}

/**
 * What the gates judge about `sha`, read in the publish repository (the commits the push would
 * send, from `base`: the repo's base branch, or a round's pull request branch), with `secrets`
 * searched in every new content, and the manifest (a round's kind when `round`).
 */
export async function workFacts(
	ws: Workspace,
	work: Work,
	sha: string,
	on: { repo: RepoConfig; base: string; round: boolean },
	secrets: readonly string[],
): Promise<WorkFacts> {
	const { repo } = on;
	const facts = await ws.publish.facts(sha);
	// Work off the base is refused and never pushed; its history is not all here to search.
	const leaks = !facts.onBase
		? []
		: await ws.publish.secretsIn(sha, secrets).catch((err: Error) => {
				throw new StepFailure(
					`could not check the commits for the secrets Lisa holds: ${err.message}`,
					false,
					"gate",
				);
			});
	const manifestError = await checkManifest(work.manifestDir, on.round).then(
		() => undefined,
		(err: Error) => err.message,
	);
	return {
		...facts,
		leaks,
		manifestError,
		allowWorkflowChanges: repo.allow_workflow_changes,
		baseBranch: on.base,
	};
}

/** The gates the facts fail, as check problems. */
export const gates = (facts: WorkFacts): CheckProblem[] =>
	gateProblems(facts).map((g) => ({
		kind: "gate",
		gate: g.gate,
		summary: g.message,
		lesson: gateLesson(g.gate),
	}));

/** The repo's validate commands, in the work's directory, as the agent's user. */
export async function validate(
	work: Work,
	repo: RepoConfig,
	run: { env: NodeJS.ProcessEnv; deadlineAt: number; user?: AgentUser; signal?: AbortSignal },
	timeline: Timeline,
): Promise<CheckProblem[]> {
	if (!repo.validate.length) return [];
	const failure = await runCommands(repo.validate, { cwd: work.dir, ...run });
	if (Date.now() >= run.deadlineAt)
		throw new StepFailure("step timed out during validation", false, "timeout");
	if (!failure) {
		await timeline.add("validation.passed", `validate passed: ${repo.validate.join(" && ")}`);
		return [];
	}
	const summary = describeFailure("validate", failure);
	return [{ kind: "validation", summary, output: failure.output, lesson: summary }];
}
