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

	describe("epics", () => {
		const epicRules = { ...rules, epic: { label: "lisa-epic", needs_spec_label: "needs-spec" } };
		const withLabels = (names: string[], over: Partial<LinearIssueEvent> = {}) => {
			const all = names.map((name) => ({ id: `l-${name.toLowerCase()}`, name }));
			return base({
				...over,
				data: { ...base().data, labels: all, labelIds: all.map((l) => l.id) },
			});
		};

		it("asks for an epic run when the issue carries the epic label, with or without the trigger label", () => {
			for (const names of [["Lisa-Epic"], ["lisa", "lisa-epic"]])
				expect(
					linearIssueVerdict(withLabels(names, { action: "create" }), epicRules),
				).toMatchObject({
					trigger: true,
					kind: "epic",
					why: 'created with label "lisa-epic"',
				});
			const added = withLabels(["lisa-epic", "bug"], { updatedFrom: { labelIds: ["l-bug"] } });
			expect(linearIssueVerdict(added, epicRules)).toMatchObject({
				trigger: true,
				kind: "epic",
				why: 'label "lisa-epic" added',
			});
			// The trigger label added to an epic: still an epic.
			const lisa = withLabels(["lisa", "lisa-epic"], {
				updatedFrom: { labelIds: ["l-lisa-epic"] },
			});
			expect(linearIssueVerdict(lisa, epicRules)).toMatchObject({ trigger: true, kind: "epic" });
		});

		it("keeps a plain run plain, ignores other labels, and leaves an epic that waits for its spec", () => {
			const plain = linearIssueVerdict(withLabels(["lisa"], { action: "create" }), epicRules);
			expect(plain).toMatchObject({ trigger: true });
			expect(plain).not.toHaveProperty("kind");
			expect(linearIssueVerdict(withLabels(["epic"], { action: "create" }), epicRules)).toEqual({
				trigger: false,
				reason: 'created without label "lisa"',
			});
			// The epic label in the payload's labels but no longer on the issue (labelIds) is not carried.
			const removed = withLabels(["lisa-epic"], { action: "create" });
			if (removed.data) removed.data.labelIds = [];
			expect(linearIssueVerdict(removed, epicRules).trigger).toBe(false);
			// Without the epic config, the epic label is just a label.
			expect(
				linearIssueVerdict(withLabels(["lisa-epic"], { action: "create" }), rules).trigger,
			).toBe(false);
			const waiting = withLabels(["lisa-epic", "needs-spec"], {
				updatedFrom: { stateId: "s-backlog" },
			});
			expect(linearIssueVerdict(waiting, epicRules)).toEqual({
				trigger: false,
				reason:
					'the epic waits: it carries "needs-spec": answer the questions in its description, then remove the label',
			});
		});
	});
});
