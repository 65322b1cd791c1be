import { describe, expect, it } from "vitest";
import { parseConfig } from "../config/schema";
import { issueQuery, labelToRemove, sameName, workflowStates } from "./workflow";

const sc = (over: Record<string, unknown> = {}) =>
	parseConfig({ repos: [{ name: "api", url: "file:///r.git" }], source_config: over })
		.source_config;

describe("workflow names", () => {
	it("matches names trimmed and case-insensitively", () => {
		expect(sameName(" In Review ", "in review")).toBe(true);
		expect(sameName("In Review", undefined)).toBe(false);
	});

	it("lists every state once, merged included when configured", () => {
		expect(workflowStates(sc({ merged: "Done" }))).toEqual([
			"Todo",
			"In Progress",
			"In Review",
			"Done",
		]);
		expect(workflowStates(sc({ done: "todo" }))).toEqual(["Todo", "In Progress"]);
	});

	it("queries the labelled issues of a state, pick_from by default", () => {
		expect(issueQuery(sc({ team: "ENG", project: "Web" }))).toEqual({
			team: "ENG",
			project: "Web",
			label: "lisa",
			state: "Todo",
			workflow: ["Todo", "In Progress", "In Review"],
		});
		expect(issueQuery(sc(), "In Progress").state).toBe("In Progress");
	});

	it("removes the trigger label, another label, or none", () => {
		expect(labelToRemove(sc())).toBe("lisa");
		expect(labelToRemove(sc({ remove_label: "ready" }))).toBe("ready");
		expect(labelToRemove(sc({ remove_label: false }))).toBeUndefined();
	});
});
