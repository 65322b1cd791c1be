import type { RepoConfig } from "../../shared/config/schema";
import { gateProblems } from "../../shared/domain/gates";
import type { Problem } from "../../shared/domain/prompt";
import { describeFailure, runCommands } from "./commands";
import { StepFailure } from "./failure";
import { readManifest } from "./manifest";
import type { Timeline } from "./timeline";
import type { Work, Workspace } from "./workspace";

export interface CheckProblem extends Problem {
	kind: "gate" | "validation";
}

const lastLines = (text: string, n = 10) => text.trim().split("\n").slice(-n).join("\n");

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
	env: NodeJS.ProcessEnv,
	deadlineAt: number,
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
	if (gates.length) return gates.map((g) => ({ kind: "gate", summary: g.message }));
	if (!repo.validate.length) return [];
	const failure = await runCommands(repo.validate, { cwd: work.dir, env, deadlineAt });
	if (Date.now() >= deadlineAt)
		throw new StepFailure("step timed out during validation", false, "timeout");
	if (!failure) {
		await timeline.add("validation.passed", `validate passed: ${repo.validate.join(" && ")}`);
		return [];
	}
	return [
		{ kind: "validation", summary: describeFailure("validate", failure), output: failure.output },
	];
}
