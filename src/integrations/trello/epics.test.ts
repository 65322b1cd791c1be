import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
	startTrelloDouble,
	type TrelloBoard,
	type TrelloCard,
	type TrelloDouble,
} from "../../../test/doubles/trello/server";
import { TrelloTracker } from "./client";
import { TASKS_CHECKLIST } from "./epics";

let trello: TrelloDouble;
let tracker: TrelloTracker;
let board: TrelloBoard;

beforeAll(async () => {
	trello = await startTrelloDouble();
	board = trello.store.addBoard("Web", ["Todo", "In Progress", "Done"], ["lisa", "lisa-epic"]);
	tracker = new TrelloTracker({ apiKey: trello.apiKey, token: trello.token }, trello.url);
});
afterAll(() => trello.stop());

const marker = (run: string, task: string) => `<!-- lisa-epic ${run} task ${task} -->`;
const sub = (title: string, m: string, state = "Todo") => ({
	title,
	body: `Do ${title}.\n\n${m}`,
	marker: m,
	state,
});
const epicCard = () =>
	trello.store.addCard(board.id, "Todo", { name: "Epic", labels: ["lisa-epic"] });
const items = (epic: TrelloCard) =>
	trello.store
		.checklistsOf(epic)
		.map((l) => [l.name, l.checkItems.map((i) => [i.name, i.state])] as const);

describe("Trello epics (against the REST double)", () => {
	it("creates each task's card in the state's list and lists it once on the epic's checklist", async () => {
		const epic = epicCard();
		const first = await tracker.epics.createSubIssue(epic.id, sub("Model", marker("R1", "01")));
		const second = await tracker.epics.createSubIssue(
			epic.shortLink,
			sub("API", marker("R1", "02"), "in progress"),
		);
		const a = trello.store.mustCard(first.id);
		const b = trello.store.mustCard(second.id);
		expect(first).toEqual({ id: a.id, key: a.shortLink, url: trello.store.cardUrl(a) });
		expect(a).toMatchObject({ name: "Model", desc: `Do Model.\n\n${marker("R1", "01")}` });
		expect(trello.store.listName(a)).toBe("Todo");
		expect(trello.store.listName(b)).toBe("In Progress");
		const link = (c: TrelloCard) => `https://trello.com/c/${c.shortLink}`;
		expect(items(epic)).toEqual([
			[
				TASKS_CHECKLIST,
				[
					[link(a), "incomplete"],
					[link(b), "incomplete"],
				],
			],
		]);
		// No relations on Trello: the description says it.
		await tracker.epics.addBlocker(second.id, first.id);

		expect(await tracker.epics.findSubIssue(epic.id, marker("R1", "02"))).toEqual(second);
		expect(await tracker.epics.findSubIssue(epic.id, marker("R1", "03"))).toBeUndefined();
		expect(items(epic)[0]?.[1]).toHaveLength(2);

		await tracker.epics.checkTask?.(epic.id, first);
		expect(items(epic)[0]?.[1]).toEqual([
			[link(a), "complete"],
			[link(b), "incomplete"],
		]);
	});

	it("finds a card carrying the marker in its description only, and lists one made before a crash", async () => {
		const epic = epicCard();
		const wanted = marker("R2", "01");
		trello.store.addCard(board.id, "Todo", { name: wanted, desc: "no marker" });
		trello.store.addCard(board.id, "Todo", { name: "Old", desc: marker("R20", "01") });
		expect(await tracker.epics.findSubIssue(epic.id, wanted)).toBeUndefined();
		// Archived, and off the checklist: still found (never made twice), and listed now.
		const orphan = trello.store.addCard(board.id, "Done", { name: "Orphan", desc: `x ${wanted}` });
		orphan.closed = true;
		expect((await tracker.epics.findSubIssue(epic.id, wanted))?.id).toBe(orphan.id);
		expect(items(epic)).toEqual([
			[TASKS_CHECKLIST, [[`https://trello.com/c/${orphan.shortLink}`, "incomplete"]]],
		]);

		const bad = await tracker.epics.findSubIssue(epic.id, "<!---->").catch((e) => e);
		expect(bad).toMatchObject({ name: "TrackerError", transient: false });
		const missingList = await tracker.epics
			.createSubIssue(epic.id, sub("X", marker("R2", "02"), "Ready"))
			.catch((e) => e);
		expect(missingList).toMatchObject({ name: "TrackerError", transient: false });
		expect(missingList.message).toMatch(
			/list "Ready" not found .*available: Todo, In Progress, Done/,
		);
	});

	it("posts a comment and edits it in place; someone else's comment is refused", async () => {
		const epic = epicCard();
		const id = await tracker.comment(epic.id, "Planning…");
		await tracker.epics.editComment(epic.id, id, "1 of 2 tasks done");
		expect(trello.store.commentsOf(epic).map((a) => [a.id, a.data.text])).toEqual([
			[id, "1 of 2 tasks done"],
		]);
		const theirs = trello.human().comment(epic, "Looks good");
		const refused = await tracker.epics.editComment(epic.id, theirs.id, "x").catch((e) => e);
		expect(refused).toMatchObject({ name: "TrackerError", transient: false });
		expect(trello.store.commentsOf(epic)[1]?.data.text).toBe("Looks good");
		const gone = await tracker.epics
			.editComment(epic.id, "000000000000000000000000", "x")
			.catch((e) => e);
		expect(gone).toMatchObject({ name: "TrackerError", transient: false });
	});

	it("adds a label, creating it on the board when missing, once", async () => {
		const epic = epicCard();
		await tracker.epics.addLabel(epic.id, "needs-spec");
		await tracker.epics.addLabel(epic.id, "Needs-Spec");
		expect(trello.store.labelNames(epic)).toEqual(["lisa-epic", "needs-spec"]);
		expect(trello.store.labels.filter((l) => l.name === "needs-spec")).toHaveLength(1);
	});

	it("reports a 5xx as transient", async () => {
		const epic = epicCard();
		trello.failNext(1, 503);
		const down = await tracker.comment(epic.id, "x").catch((e) => e);
		expect(down).toMatchObject({ name: "TrackerError", transient: true });
		expect(trello.store.commentsOf(epic)).toEqual([]);
	});
});
