import { describe, expect, it } from "vitest";
import { type LinearIssueEvent, linearIssueVerdict } from "./trigger";

const rules = { label: "lisa", pickFrom: "Todo", team: "ENG" };
const labels = [
	{ id: "l-lisa", name: "Lisa" },
	{ id: "l-bug", name: "bug" },
];
const base = (over: Partial<LinearIssueEvent> = {}): LinearIssueEvent => ({
	type: "Issue",
	action: "update",
	actor: { id: "u-ada", type: "user" },
	data: {
		id: "issue-1",
		identifier: "ENG-1",
		labelIds: ["l-lisa", "l-bug"],
		labels,
		state: { id: "s-todo", name: "Todo", type: "unstarted" },
		team: { id: "t-eng", key: "ENG", name: "Engineering" },
	},
	...over,
});

describe("Linear trigger rules", () => {
	it("triggers on create with the label (names compared case-insensitively)", () => {
		const v = linearIssueVerdict(base({ action: "create" }), rules);
		expect(v).toMatchObject({
			trigger: true,
			issueId: "issue-1",
			issueKey: "ENG-1",
			actorId: "u-ada",
		});
	});

	it("ignores create without the label", () => {
		const v = linearIssueVerdict(
			base({
				action: "create",
				data: {
					...base().data,
					labelIds: ["l-bug"],
					labels: [labels[1] as { id: string; name: string }],
				},
			}),
			rules,
		);
		expect(v).toEqual({ trigger: false, reason: 'created without label "lisa"' });
	});

	it("triggers on update when the label was just added", () => {
		const v = linearIssueVerdict(base({ updatedFrom: { labelIds: ["l-bug"] } }), rules);
		expect(v).toMatchObject({ trigger: true, why: 'label "lisa" added' });
	});

	it("ignores an update where the label was already there", () => {
		const v = linearIssueVerdict(
			base({ updatedFrom: { labelIds: ["l-lisa"], title: "old" } }),
			rules,
		);
		expect(v.trigger).toBe(false);
	});

	it("triggers when moved into pick_from while labelled", () => {
		const v = linearIssueVerdict(base({ updatedFrom: { stateId: "s-backlog" } }), rules);
		expect(v).toMatchObject({ trigger: true, why: 'moved to "Todo" with label "lisa"' });
	});

	it("ignores a move into pick_from without the label", () => {
		const data = { ...base().data, labelIds: ["l-bug"], labels: [{ id: "l-bug", name: "bug" }] };
		const v = linearIssueVerdict(base({ data, updatedFrom: { stateId: "s-backlog" } }), rules);
		expect(v).toEqual({ trigger: false, reason: 'moved to "Todo" without label "lisa"' });
	});

	it("ignores a move into another state", () => {
		const data = { ...base().data, state: { id: "s-ip", name: "In Progress" } };
		expect(
			linearIssueVerdict(base({ data, updatedFrom: { stateId: "s-todo" } }), rules).trigger,
		).toBe(false);
	});

	it("ignores other teams, other types, removals and payloads without an issue", () => {
		const data = { ...base().data, team: { id: "t-ops", key: "OPS", name: "Ops" } };
		expect(linearIssueVerdict(base({ action: "create", data }), rules)).toEqual({
			trigger: false,
			reason: "issue belongs to team OPS, not ENG",
		});
		expect(linearIssueVerdict(base({ type: "Comment" }), rules)).toEqual({
			trigger: false,
			reason: "Comment events are not handled",
		});
		expect(linearIssueVerdict(base({ action: "remove" }), rules)).toEqual({
			trigger: false,
			reason: "issue remove is not a trigger",
		});
		expect(linearIssueVerdict({ type: "Issue", action: "create" }, rules)).toEqual({
			trigger: false,
			reason: "payload has no issue id",
		});
	});

	it("matches the team by key, name or id", () => {
		for (const team of ["eng", "Engineering", "t-eng"])
			expect(linearIssueVerdict(base({ action: "create" }), { ...rules, team }).trigger).toBe(true);
	});
});
