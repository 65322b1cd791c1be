import type { RepoConfig } from "../../shared/config/schema";
import { gateProblems } from "../../shared/domain/gates";
import { gateLesson } from "../../shared/domain/guardrails";
import type { Problem } from "../../shared/domain/prompt";
import { lastLines } from "../../shared/domain/redact";
import { describeFailure, runCommands } from "./commands";
import { StepFailure } from "./failure";
import type { AgentUser } from "./identity";
import { readManifest } from "./manifest";
import type { Timeline } from "./timeline";
import type { Work, Workspace } from "./workspace";

export interface CheckProblem extends Problem {
	kind: "gate" | "validation";
	/** The problem in Lisa's words only, for the repo's guardrails. */
	lesson: string;
}

/** The problems as one line each, with the end of any command output: the step's error. */
export function problemsText(problems: readonly CheckProblem[]): string {
	return problems
		.map((p) => (p.output ? `${p.summary}: ${lastLines(p.output)}` : p.summary))
		.join("; ");
}

/** The publishing gates, then (when they pass) the repo's validate commands. */
export async function check(
	ws: Workspace,
	work: Work,
	repo: RepoConfig,
	run: { env: NodeJS.ProcessEnv; deadlineAt: number; user?: AgentUser; signal?: AbortSignal },
	timeline: Timeline,
): Promise<CheckProblem[]> {
	const commitsAhead = await ws.commitsAhead(work);
	const changedFiles = commitsAhead ? await ws.changedFiles(work) : [];
	const manifestError = await readManifest(work.manifestDir).then(
		() => undefined,
		(err: Error) => err.message,
	);
	const gates = gateProblems({
		commitsAhead,
		changedFiles,
		manifestError,
		allowWorkflowChanges: repo.allow_workflow_changes,
		baseBranch: repo.base_branch,
	});
	if (gates.length)
		return gates.map((g) => ({ kind: "gate", summary: g.message, lesson: gateLesson(g.gate) }));
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
