import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { epicPlanDirective, type PlannedTask } from "../doubles/agents/directives";
import { createStackWorld, type StackWorld } from "../support/stack";
import { TRELLO_BOARD } from "../support/world";

// Epics with Trello (docs/epics.md › Epics), in the checklist form: a card per task in the
// pick_from list, and a "Lisa tasks" checklist on the epic card whose items are ticked as the tasks
// get done.

let w: StackWorld;
const board = () => {
	const b = w.trello.store.boards.find((x) => x.name === TRELLO_BOARD);
	if (!b) throw new Error("no board");
	return b;
};

beforeAll(async () => {
	w = await createStackWorld({ source: "trello", configExtra: "limits: {max_attempts: 1}" });
	const res = await fetch(
		`${w.trello.url}/webhooks?key=${w.trello.apiKey}&token=${w.trello.token}`,
		{
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ callbackURL: `${w.url()}/webhooks/trello`, idModel: board().id }),
		},
	);
	expect(res.status).toBe(200);
});
afterAll(() => w.stop());

const t = (id: string, title: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title,
	repo: "api",
	dependsOn,
});

describe("epics with Trello", () => {
	it("makes a card per task and ticks the epic card's checklist as they are done, in order", async () => {
		const epic = w.trello.store.addCard(board().id, "Todo", {
			name: "Reports",
			desc: epicPlanDirective([t("01", "Add the model"), t("02", "Serve it", "01")]),
		});
		const added = w.trello.human().addLabel(epic, "lisa-epic");
		await w.trello.settle();
		const delivery = w.trello.deliveries.find((d) => d.actionId === added?.id);
		if (!delivery) throw new Error("the label's action was not delivered");
		expect(delivery.status).toBe(202);
		const { runId } = delivery.response as { runId: string };

		const run = await w.waitForRun(runId, undefined, 240_000);
		expect(run.status).toBe("succeeded");
		const cards = w.trello.store.cards.filter((c) => c.desc.includes(`lisa:epic=${runId}`));
		expect(cards.map((c) => c.name).sort()).toEqual(["Add the model", "Serve it"]);
		for (const card of cards) expect(w.trello.store.listName(card)).toBe("In Review");
		const [list] = w.trello.store.checklistsOf(epic);
		expect(list?.name).toBe("Lisa tasks");
		expect(list?.checkItems.map((i) => i.state)).toEqual(["complete", "complete"]);
		const progress = w.trello.store.actions.filter(
			(a) =>
				a.type === "commentCard" &&
				(a.data.card as { id: string }).id === epic.id &&
				String((a.data as { text?: string }).text).includes("tasks done"),
		);
		expect(progress).toHaveLength(1);
		expect(String((progress[0]?.data as { text?: string } | undefined)?.text)).toMatch(
			/^Lisa resolved this epic: 2 of 2/,
		);
	}, 600_000);
});
