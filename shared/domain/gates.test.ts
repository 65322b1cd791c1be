import { describe, expect, it } from "vitest";
import { gateProblems, type WorkFacts } from "./gates";

const ok: WorkFacts = {
	commitsAhead: 1,
	changedFiles: ["src/a.ts"],
	allowWorkflowChanges: false,
	baseBranch: "main",
};

describe("publishing gates", () => {
	it("passes work with a commit, a diff, a manifest and no workflow change", () => {
		expect(gateProblems(ok)).toEqual([]);
	});

	it.each<[string, Partial<WorkFacts>, string[]]>([
		["no new commit", { commitsAhead: 0, changedFiles: [] }, ["commit"]],
		["commits that change nothing", { commitsAhead: 2, changedFiles: [] }, ["diff"]],
		[
			"an invalid manifest",
			{ manifestError: ".lisa-manifest.json is not valid JSON" },
			["manifest"],
		],
		[
			"a workflow change",
			{ changedFiles: ["src/a.ts", ".github/workflows/ci.yml"] },
			["workflows"],
		],
		[
			"everything at once",
			{ commitsAhead: 1, changedFiles: [".github/workflows/x.yml"], manifestError: "no manifest" },
			["workflows", "manifest"],
		],
	])("refuses %s", (_name, over, gates) => {
		expect(gateProblems({ ...ok, ...over }).map((p) => p.gate)).toEqual(gates);
	});

	it("allows workflow changes when the repo does, and names the files when it does not", () => {
		const facts = { ...ok, changedFiles: [".github/workflows/ci.yml"] };
		expect(gateProblems({ ...facts, allowWorkflowChanges: true })).toEqual([]);
		expect(gateProblems(facts)[0]?.message).toMatch(
			/touches \.github\/workflows\/ci\.yml.*allow_workflow_changes: true/,
		);
		// Other .github files are fine.
		expect(gateProblems({ ...ok, changedFiles: [".github/CODEOWNERS"] })).toEqual([]);
	});

	it("says what failed in words an agent and a person understand", () => {
		expect(gateProblems({ ...ok, commitsAhead: 0, changedFiles: [] })[0]?.message).toBe(
			"the agent finished without committing any change",
		);
		expect(gateProblems({ ...ok, changedFiles: [] })[0]?.message).toBe(
			"the agent's commits change nothing compared with main",
		);
	});
});
