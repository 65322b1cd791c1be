// The gates the agent's work must pass before Lisa publishes it (DESIGN §9 step 3). Pure: the task
// gathers the facts from git and the manifest.

export type GateName = "commit" | "diff" | "workflows" | "manifest";

export interface WorkFacts {
	/** Commits on the branch that are not on the base. */
	commitsAhead: number;
	/** Paths the branch changes compared with the base (old and new names of renames). */
	changedFiles: string[];
	/** Why the manifest is unusable, when it is. */
	manifestError?: string;
	allowWorkflowChanges: boolean;
	baseBranch: string;
}

export interface GateProblem {
	gate: GateName;
	message: string;
}

export const WORKFLOWS_DIR = ".github/workflows/";

/** Every gate the work fails, in the order an agent should fix them. */
export function gateProblems(f: WorkFacts): GateProblem[] {
	const problems: GateProblem[] = [];
	if (f.commitsAhead === 0)
		problems.push({ gate: "commit", message: "the agent finished without committing any change" });
	else if (f.changedFiles.length === 0)
		problems.push({
			gate: "diff",
			message: `the agent's commits change nothing compared with ${f.baseBranch}`,
		});
	const workflows = f.changedFiles.filter((p) => p.startsWith(WORKFLOWS_DIR));
	if (workflows.length && !f.allowWorkflowChanges)
		problems.push({
			gate: "workflows",
			message: `the change touches ${workflows.join(", ")}; changes under ${WORKFLOWS_DIR} are not allowed in this repository (allow_workflow_changes: true permits them)`,
		});
	if (f.manifestError) problems.push({ gate: "manifest", message: f.manifestError });
	return problems;
}
