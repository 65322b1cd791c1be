import { describe, expect, it } from "vitest";
import { MARKER_PATTERN, startComment, stepComment, successComment } from "./comments";
import { newRun, newStep, type Run } from "./run";

const run = (steps: Run["steps"]): Run => ({
	...newRun({ runId: "01R", source: "linear", issueId: "i", trigger: "webhook", now: "t" }),
	status: "running",
	steps,
});

describe("progress comments", () => {
	it("announce the start with the repositories and the run link, with Lisa's marker", () => {
		const body = startComment(run([newStep(0, "api"), newStep(1, "web")]), "http://lisa/runs/01R");
		expect(body).toBe(
			"Lisa is working on this issue (api, web). It will comment again with the pull request or if it fails.\n\nRun: http://lisa/runs/01R\n<!-- lisa:run=01R -->",
		);
		expect(body.match(MARKER_PATTERN)?.[1]).toBe("01R");
	});

	it("report a step's pull request and what comes next", () => {
		const steps = [
			{ ...newStep(0, "api"), prUrl: "https://github.com/acme/api/pull/3" },
			newStep(1, "web"),
		];
		expect(stepComment(run(steps), 0, "u")).toBe(
			"Lisa opened a pull request in api (step 1 of 2): https://github.com/acme/api/pull/3\nNext: web.\n\nRun: u\n<!-- lisa:run=01R -->",
		);
		expect(successComment(run(steps), "u")).toContain("https://github.com/acme/api/pull/3");
	});
});
