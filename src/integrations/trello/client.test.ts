import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
	startTrelloDouble,
	type TrelloBoard,
	type TrelloDouble,
} from "../../../test/doubles/trello/server";
import { TrackerError } from "../tracker";
import { trelloMemberId } from "./actor";
import { TrelloTracker, trelloCardRef } from "./client";

let trello: TrelloDouble;
let tracker: TrelloTracker;
let board: TrelloBoard;
const query = {
	team: "Web",
	label: "lisa",
	state: "Todo",
	workflow: ["Todo", "In Progress", "In Review"],
};

beforeAll(async () => {
	trello = await startTrelloDouble();
	board = trello.store.addBoard("Web", ["Todo", "In Progress", "In Review"], ["lisa", "bug"]);
	trello.store.addBoard("Ops", ["Todo"], ["lisa"]);
	tracker = new TrelloTracker({ apiKey: trello.apiKey, token: trello.token }, trello.url);
});
afterAll(() => trello.stop());

describe("Trello adapter (against the REST double)", () => {
	it("reads a card by id, short link or URL", async () => {
		const card = trello.store.addCard(board.id, "Todo", {
			name: "Fix it",
			desc: "Details",
			labels: ["lisa"],
		});
		const expected = {
			id: card.id,
			key: card.shortLink,
			title: "Fix it",
			description: "Details",
			url: trello.store.cardUrl(card),
			teamId: board.id,
			labels: ["lisa"],
			state: "Todo",
			closed: false,
		};
		expect(await tracker.fetchIssue(card.id)).toEqual(expected);
		expect(await tracker.fetchIssue(card.shortLink)).toEqual(expected);
		expect(await tracker.fetchIssue(trello.store.cardUrl(card))).toEqual(expected);
		expect(trelloCardRef("https://trello.com/c/AbCd1234/42-fix")).toBe("AbCd1234");
		// The list it is in now, and whether it is archived.
		trello.store.moveCard(card, trello.store.mustList(board.id, "In Review").id, trello.me);
		card.closed = true;
		expect(await tracker.fetchIssue(card.id)).toMatchObject({ state: "In Review", closed: true });
		card.closed = false;
		for (const ref of ["000000000000000000000000", "not a card"]) {
			const err = await tracker.fetchIssue(ref).catch((e) => e);
			expect(err).toBeInstanceOf(TrackerError);
			expect(err).toMatchObject({ transient: false });
			expect(err.message).toMatch(/^Trello card .* was not found$/);
		}
	});

	it("lists labelled cards of the pick_from list in the list's order", async () => {
		const a = trello.store.addCard(board.id, "Todo", { name: "First", labels: ["LISA"] });
		trello.store.addCard(board.id, "Todo", { name: "Unlabelled" });
		const b = trello.store.addCard(board.id, "Todo", { name: "Second", labels: ["lisa", "bug"] });
		trello.store.addCard(board.id, "In Progress", { name: "Elsewhere", labels: ["lisa"] });
		const next = await tracker.nextIssues(query);
		expect(next.map((i) => i.id)).toEqual(expect.arrayContaining([a.id, b.id]));
		expect(next.map((i) => i.title)).not.toContain("Unlabelled");
		expect(next.map((i) => i.title)).not.toContain("Elsewhere");
		expect(next.findIndex((i) => i.id === a.id)).toBeLessThan(next.findIndex((i) => i.id === b.id));
		const err = await tracker.nextIssues({ ...query, team: "Nope" }).catch((e) => e);
		expect(err.message).toBe('Trello board "Nope" not found; available: Web, Ops');
	});

	it("moves, comments, attaches once and removes the label, as the token's member", async () => {
		const card = trello.store.addCard(board.id, "Todo", {
			name: "Work it",
			labels: ["lisa", "bug"],
		});
		await tracker.moveTo(card.id, "in progress");
		await tracker.moveTo(card.id, "In Progress"); // already there: no second action
		await tracker.comment(card.id, "Working on it");
		await tracker.attachLink(
			card.id,
			"https://github.com/acme/api/pull/1",
			"Pull request acme/api#1",
		);
		await tracker.attachLink(
			card.id,
			"https://github.com/acme/api/pull/1",
			"Pull request acme/api#1",
		);
		await tracker.removeLabel(card.id, "LISA");
		await tracker.removeLabel(card.id, "lisa"); // already gone: nothing to do
		expect(trello.store.listName(card)).toBe("In Progress");
		expect(trello.store.labelNames(card)).toEqual(["bug"]);
		expect(card.attachments.map((x) => [x.url, x.name])).toEqual([
			["https://github.com/acme/api/pull/1", "Pull request acme/api#1"],
		]);
		const actions = trello.store.actions.filter(
			(x) => (x.data.card as { id: string }).id === card.id,
		);
		expect(actions.map((x) => [x.type, x.idMemberCreator])).toEqual([
			["updateCard", trello.me.id],
			["commentCard", trello.me.id],
			["addAttachmentToCard", trello.me.id],
			["removeLabelFromCard", trello.me.id],
		]);
		const err = await tracker.moveTo(card.id, "Shipped").catch((e) => e);
		expect(err.message).toBe(
			'Trello list "Shipped" not found on the board; available: Todo, In Progress, In Review',
		);
		expect(await trelloMemberId({ apiKey: trello.apiKey, token: trello.token }, trello.url)).toBe(
			trello.me.id,
		);
	});

	it("reports a bad token as permanent and an unreachable API as transient", async () => {
		const err = await trelloMemberId({ apiKey: trello.apiKey, token: "nope" }, trello.url).catch(
			(e) => e,
		);
		expect(err).toMatchObject({ name: "TrackerError", transient: false });
		expect(err.message).toMatch(/HTTP 401 invalid token/);
		const down = new TrelloTracker({ apiKey: "k", token: "t" }, "http://127.0.0.1:9/1");
		expect(await down.fetchIssue("abc").catch((e) => e)).toMatchObject({ transient: true });
	});
});
