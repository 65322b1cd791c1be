import { describe, expect, it } from "vitest";
import { gateProblems, isWorkflowPath, type WorkFacts } from "./gates";

const ok: WorkFacts = {
	onBase: true,
	commitsAhead: 1,
	changesTree: true,
	touched: ["src/a.ts"],
	leaks: [],
	allowWorkflowChanges: false,
	baseBranch: "main",
};

describe("publishing gates", () => {
	it("passes work with a commit, a diff, a manifest and no workflow change", () => {
		expect(gateProblems(ok)).toEqual([]);
	});

	it.each<[string, Partial<WorkFacts>, string[]]>([
		["no new commit", { commitsAhead: 0, changesTree: false, touched: [] }, ["commit"]],
		["commits that change nothing", { commitsAhead: 2, changesTree: false }, ["diff"]],
		["commits that do not build on the base", { onBase: false }, ["base"]],
		[
			"an invalid manifest",
			{ manifestError: ".lisa-manifest.json is not valid JSON" },
			["manifest"],
		],
		["a workflow change", { touched: ["src/a.ts", ".github/workflows/ci.yml"] }, ["workflows"]],
		[
			"a commit that moved while validate ran",
			{ moved: ["a".repeat(40), "b".repeat(40)] },
			["moved"],
		],
		[
			"everything at once",
			{ commitsAhead: 1, touched: [".github/workflows/x.yml"], manifestError: "no manifest" },
			["workflows", "manifest"],
		],
	])("refuses %s", (_name, over, gates) => {
		expect(gateProblems({ ...ok, ...over }).map((p) => p.gate)).toEqual(gates);
	});

	it("allows workflow changes when the repo does, and names the files when it does not", () => {
		const facts = { ...ok, touched: [".github/workflows/ci.yml"] };
		expect(gateProblems({ ...facts, allowWorkflowChanges: true })).toEqual([]);
		expect(gateProblems(facts)[0]?.message).toMatch(
			/touches \.github\/workflows\/ci\.yml.*allow_workflow_changes: true/,
		);
		// Other .github files are fine.
		expect(gateProblems({ ...ok, touched: [".github/CODEOWNERS"] })).toEqual([]);
	});

	it.each([
		".github/workflows/ci.yml",
		".github/workflows/t\tab\u00e9.yml",
		".github/workflows/a\nb.yml",
		".GitHub/Workflows/ci.yml",
		".github/workflows/nested/deeper.yml",
		// The directory itself, or .github, replaced by a file, a symbolic link or a submodule.
		".github/workflows",
		".github",
	])("counts %j as a workflow path", (p) => {
		expect(isWorkflowPath(p)).toBe(true);
		expect(gateProblems({ ...ok, touched: [p] }).map((g) => g.gate)).toEqual(["workflows"]);
	});

	it.each([
		".github/CODEOWNERS",
		"docs/.github/workflows/x.yml",
		".github/workflowsx/y.yml",
		"github/workflows/x.yml",
	])("does not count %j", (p) => {
		expect(isWorkflowPath(p)).toBe(false);
	});

	it("shows unusual path names unambiguously", () => {
		const [problem] = gateProblems({ ...ok, touched: [".github/workflows/t\tab\u00e9.yml"] });
		expect(problem?.message).toContain('".github/workflows/t\\tab\u00e9.yml"');
	});

	it("says what failed in words an agent and a person understand", () => {
		expect(gateProblems({ ...ok, commitsAhead: 0, changesTree: false })[0]?.message).toBe(
			"the agent finished without committing any change",
		);
		expect(gateProblems({ ...ok, changesTree: false })[0]?.message).toBe(
			"the agent's commits change nothing compared with main",
		);
	});
});
