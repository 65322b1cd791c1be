import { describe, expect, it } from "vitest";
import type { SourceConfig } from "../config/schema";
import { isEpic, whyEpicWaits, whyNotQualifying, whySessionNotLive } from "./qualify";

const sc = {
	label: "lisa",
	pick_from: "Todo",
	in_progress: "In Progress",
	done: "In Review",
	merged: "Merged",
} as SourceConfig;
const gh = {
	...sc,
	pick_from: "open",
	in_progress: "in progress",
	done: "in review",
	merged: "merged",
};
const issue = (state: string, labels: string[], closed = false) => ({ state, labels, closed });

describe("whether an issue still waits for Lisa", () => {
	it("needs the trigger label and a state Lisa does not move issues to", () => {
		expect(whyNotQualifying("linear", issue("Todo", ["LISA"]), sc)).toBeUndefined();
		expect(whyNotQualifying("linear", issue("Backlog", ["lisa", "bug"]), sc)).toBeUndefined();
		expect(whyNotQualifying("linear", issue("Todo", ["bug"]), sc)).toBe(
			'it does not carry the label "lisa"',
		);
		for (const state of ["In Progress", "in review", "Merged"])
			expect(whyNotQualifying("linear", issue(state, ["lisa"]), sc)).toMatch(
				/^it is in ".*", where Lisa moves the issues it works on$/,
			);
		expect(whyNotQualifying("linear", issue("Done", ["lisa"], true), sc)).toBe(
			'it is closed ("Done")',
		);
	});

	it("lets a state that is also pick_from qualify", () => {
		const same = { ...sc, in_progress: "Todo" } as SourceConfig;
		expect(whyNotQualifying("linear", issue("Todo", ["lisa"]), same)).toBeUndefined();
	});

	it("reads GitHub's status labels as states, and a closed issue as closed", () => {
		expect(whyNotQualifying("github", issue("open", ["lisa"]), gh)).toBeUndefined();
		expect(whyNotQualifying("github", issue("open", ["lisa", "in progress"]), gh)).toBe(
			'it is in "in progress", where Lisa moves the issues it works on',
		);
		expect(whyNotQualifying("github", issue("closed", ["lisa"], true), gh)).toBe(
			'it is closed ("closed")',
		);
	});

	it("takes a Trello card in pick_from without the label, as moving it there is a trigger", () => {
		expect(whyNotQualifying("trello", issue("Todo", []), sc)).toBeUndefined();
		expect(whyNotQualifying("trello", issue("Backlog", ["lisa"]), sc)).toBeUndefined();
		expect(whyNotQualifying("trello", issue("Backlog", []), sc)).toBe(
			'it does not carry the label "lisa" and is not in "Todo"',
		);
		expect(whyNotQualifying("trello", issue("In Review", []), sc)).toMatch(/not in "Todo"/);
		// An archived card is closed, wherever it is.
		expect(whyNotQualifying("trello", issue("Todo", ["lisa"], true), sc)).toBe(
			'it is closed ("Todo")',
		);
	});

	it("needs an agent session that still waits for its agent", () => {
		for (const status of ["pending", "active", "awaitingInput"])
			expect(whySessionNotLive({ status, dismissed: false })).toBeUndefined();
		for (const status of ["complete", "error", "stale"])
			expect(whySessionNotLive({ status, dismissed: false })).toBe(
				`its agent session is ${status}`,
			);
		expect(whySessionNotLive({ status: "active", dismissed: true })).toBe(
			"its agent session was dismissed",
		);
	});
});

describe("whether an epic still waits for Lisa", () => {
	const epic = { label: "lisa-epic", needs_spec_label: "needs-spec" };

	it("takes the epic label as a trigger label, alone or with the trigger label", () => {
		expect(whyNotQualifying("linear", issue("Todo", ["Lisa-Epic"]), sc, epic)).toBeUndefined();
		expect(
			whyNotQualifying("linear", issue("Todo", ["lisa", "lisa-epic"]), sc, epic),
		).toBeUndefined();
		expect(whyNotQualifying("github", issue("open", ["lisa-epic"]), gh, epic)).toBeUndefined();
		expect(whyNotQualifying("linear", issue("Todo", ["epic"]), sc, epic)).toBe(
			'it does not carry the label "lisa" or "lisa-epic"',
		);
		// Without the epic config, the epic label is just another label.
		expect(whyNotQualifying("linear", issue("Todo", ["lisa-epic"]), sc)).toBe(
			'it does not carry the label "lisa"',
		);
		expect(isEpic(["lisa", "LISA-EPIC"], epic)).toBe(true);
		expect(isEpic(["lisa", "epic"], epic)).toBe(false);
	});

	it("leaves an epic that waits for its spec until the label is removed", () => {
		const waits =
			'it carries "needs-spec": answer the questions in its description, then remove the label';
		expect(whyNotQualifying("linear", issue("Todo", ["lisa-epic", "Needs-Spec"]), sc, epic)).toBe(
			waits,
		);
		expect(whyEpicWaits(["lisa-epic", "needs-spec"], epic)).toBe(waits);
		// needs-spec on an issue that is not an epic is someone else's label.
		expect(whyEpicWaits(["lisa", "needs-spec"], epic)).toBeUndefined();
		expect(
			whyNotQualifying("linear", issue("Todo", ["lisa", "needs-spec"]), sc, epic),
		).toBeUndefined();
	});
});
