import { describe, expect, it } from "vitest";
import { type TrelloWebhook, trelloVerdict } from "./trigger";

const rules = { label: "lisa", pickFrom: "Ready for AI", board: "Web" };
const card = { id: "65e0000000000000000000c1", name: "Fix login redirect", shortLink: "AbCd1234" };
const board = { id: "6490000000000000000000b1", name: "Web" };
const action = (type: string, data: Record<string, unknown>): TrelloWebhook => ({
	action: { id: "a1", type, idMemberCreator: "m-ada", data: { card, board, ...data } },
});

describe("Trello trigger rules", () => {
	it("triggers when the label is added (names compared case-insensitively)", () => {
		expect(
			trelloVerdict(action("addLabelToCard", { label: { id: "l1", name: "LISA" } }), rules),
		).toEqual({
			trigger: true,
			cardId: card.id,
			cardKey: "AbCd1234",
			actorId: "m-ada",
			why: 'label "lisa" added',
		});
	});

	it("triggers on a move into pick_from, which still needs the label checked on the card", () => {
		const v = trelloVerdict(
			action("updateCard", {
				listBefore: { id: "x", name: "Backlog" },
				listAfter: { id: "y", name: "ready for ai" },
				old: { idList: "x" },
			}),
			rules,
		);
		expect(v).toMatchObject({ trigger: true, why: 'moved to "Ready for AI"' });
	});

	it("ignores other labels, other lists, other boards and other actions with the reason", () => {
		const reasons = [
			action("addLabelToCard", { label: { name: "bug" } }),
			action("updateCard", { listAfter: { name: "Done" } }),
			action("updateCard", { old: { name: "x" } }),
			{
				action: {
					id: "a",
					type: "addLabelToCard",
					data: { card, board: { id: "b2", name: "Ops" }, label: { name: "lisa" } },
				},
			},
			action("createCard", { list: { name: "Ready for AI" } }),
			{ model: {} },
		].map((p) => trelloVerdict(p as TrelloWebhook, rules));
		expect(reasons).toEqual([
			{ trigger: false, reason: 'label "bug" is not "lisa"' },
			{ trigger: false, reason: 'moved to "Done", not "Ready for AI"' },
			{
				trigger: false,
				reason: 'updateCard is neither label "lisa" added nor a move into "Ready for AI"',
			},
			{ trigger: false, reason: 'card is on board "Ops", not "Web"' },
			{
				trigger: false,
				reason: 'createCard is neither label "lisa" added nor a move into "Ready for AI"',
			},
			{ trigger: false, reason: "payload has no action" },
		]);
	});

	it("asks for an epic run when the epic label is added, and only with the epic config", () => {
		const epicRules = { ...rules, epic: { label: "lisa-epic", needs_spec_label: "needs-spec" } };
		const added = action("addLabelToCard", { label: { id: "l2", name: "Lisa-Epic" } });
		expect(trelloVerdict(added, epicRules)).toEqual({
			trigger: true,
			cardId: card.id,
			cardKey: "AbCd1234",
			actorId: "m-ada",
			why: 'label "lisa-epic" added',
			kind: "epic",
		});
		expect(trelloVerdict(added, rules)).toEqual({
			trigger: false,
			reason: 'label "Lisa-Epic" is not "lisa"',
		});
		const lisa = trelloVerdict(action("addLabelToCard", { label: { name: "lisa" } }), epicRules);
		expect(lisa).toMatchObject({ trigger: true });
		expect(lisa).not.toHaveProperty("kind");
		expect(trelloVerdict(action("addLabelToCard", { label: { name: "bug" } }), epicRules)).toEqual({
			trigger: false,
			reason: 'label "bug" is not "lisa" or "lisa-epic"',
		});
		// No card, no run: an epic label on nothing is not a trigger.
		const cardless = {
			action: { id: "a", type: "addLabelToCard", data: { board, label: { name: "lisa-epic" } } },
		};
		expect(trelloVerdict(cardless as TrelloWebhook, epicRules)).toEqual({
			trigger: false,
			reason: "action has no card",
		});
	});

	it("recognises Lisa's own comments by the marker", () => {
		const v = trelloVerdict(
			action("commentCard", { text: "Lisa opened a PR\n<!-- lisa:run=01ABC -->" }),
			rules,
		);
		expect(v).toEqual({ trigger: false, reason: "Lisa's own comment (it carries Lisa's marker)" });
	});
});
