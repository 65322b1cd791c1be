// The gates the agent's work must pass before Lisa publishes it
// (docs/agent-task.md › Checks, validation and retries). Pure: the task gathers the facts from its
// publish repository and the manifest, about exactly the commits it would push.

export type GateName = "commit" | "base" | "diff" | "workflows" | "secrets" | "moved" | "manifest";

export interface WorkFacts {
	/** Whether the commit to publish descends from the base. */
	onBase: boolean;
	/** Commits on the branch that are not on the base. */
	commitsAhead: number;
	/** Whether the commit's tree differs from the base's. */
	changesTree: boolean;
	/** Every path the pushed commits add, delete or change (content, mode, link or submodule). */
	touched: string[];
	/** Where the commits hold a secret Lisa knows (files, or "a commit message"). */
	leaks: string[];
	/** The work's HEAD moved after it was judged (while validate ran): from, to. */
	moved?: [string, string];
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

/**
 * Whether a path is a workflow or could become the workflows directory: anything under it, or
 * `.github` / `.github/workflows` themselves as a file, link or submodule. Compared without case,
 * so no spelling of the directory slips through.
 */
export function isWorkflowPath(p: string): boolean {
	const lower = p.toLowerCase();
	return (
		lower === ".github" || lower === WORKFLOWS_DIR.slice(0, -1) || lower.startsWith(WORKFLOWS_DIR)
	);
}

/** A path as it can be read unambiguously (tabs, newlines and non-ASCII escaped). */
const shown = (p: string) => (/^[\x21-\x7e]+$/.test(p) ? p : JSON.stringify(p));

/** Every gate the work fails, in the order an agent should fix them. */
export function gateProblems(f: WorkFacts): GateProblem[] {
	const problems: GateProblem[] = [];
	if (!f.onBase)
		problems.push({
			gate: "base",
			message: `the agent's commits do not build on ${f.baseBranch}: start from it and commit on top`,
		});
	else if (f.commitsAhead === 0)
		problems.push({ gate: "commit", message: "the agent finished without committing any change" });
	else if (!f.changesTree)
		problems.push({
			gate: "diff",
			message: `the agent's commits change nothing compared with ${f.baseBranch}`,
		});
	const workflows = [...new Set(f.touched.filter(isWorkflowPath))];
	if (workflows.length && !f.allowWorkflowChanges)
		problems.push({
			gate: "workflows",
			message: `the change touches ${workflows.map(shown).join(", ")}; changes under ${WORKFLOWS_DIR} are not allowed in this repository (allow_workflow_changes: true permits them)`,
		});
	if (f.leaks.length)
		problems.push({
			gate: "secrets",
			message: `the change holds a secret Lisa knows (an API key or token, as it is or encoded) in ${f.leaks.map(shown).join(", ")}: remove it from every commit; secrets never belong in the repository`,
		});
	if (f.moved)
		problems.push({
			gate: "moved",
			message: `the commit changed while the validate commands ran (HEAD moved from ${f.moved[0].slice(0, 12)} to ${f.moved[1].slice(0, 12)}): validation must not commit, so the commit Lisa checks is the one it publishes`,
		});
	if (f.manifestError) problems.push({ gate: "manifest", message: f.manifestError });
	return problems;
}
