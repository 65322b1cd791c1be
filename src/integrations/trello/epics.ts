import type { CreatedIssue } from "../../domain/epic";
import { sameName } from "../../domain/workflow";
import {
	carriesMarker,
	checkMarker,
	checkSubIssue,
	type EpicTracker,
	type SubIssueInput,
} from "../tracker";
import { boardLabels, listNamed, type Named } from "./board";
import { type TrelloAuth, trelloCall } from "./http";

// Epics on Trello (docs/epics.md › Epics): each task a card in the state's list of the epic's
// board, and an item on the epic card's "Lisa tasks" checklist naming it (Trello shows a card's URL
// as the card). Trello has no relations: the card's description says what it waits for.

/** The epic card's checklist of its tasks. */
export const TASKS_CHECKLIST = "Lisa tasks";
/** The colour of a label Lisa creates (`needs-spec`): one of Trello's named colours. */
const LABEL_COLOR = "orange";

interface Card {
	id: string;
	idBoard: string;
	name: string;
	desc?: string;
	shortLink: string;
	shortUrl?: string;
	url: string;
	idLabels?: string[];
}

interface Checklist extends Named {
	checkItems: (Named & { state: string })[];
}

const CARD_FIELDS = "idBoard,name,desc,shortLink,shortUrl,url,idLabels";

const toCreated = (card: Card): CreatedIssue => ({
	id: card.id,
	key: card.shortLink,
	url: card.url,
});

/** A card is `https://trello.com/c/<shortLink>…` wherever a checklist item names it. */
const namesCard = (itemName: string, shortLink: string) =>
	new RegExp(`/c/${shortLink.replace(/[^A-Za-z0-9]/g, "\\$&")}(?:[/?#]|$)`).test(itemName);

export function trelloEpics(
	auth: TrelloAuth,
	baseUrl: string,
	cardRef: (ref: string) => string,
): EpicTracker {
	const call = <T>(method: string, path: string, what: string, params?: Record<string, string>) =>
		trelloCall<T>(auth, baseUrl, method, path, what, params);
	const card = (ref: string) => {
		const id = encodeURIComponent(cardRef(ref));
		return call<Card>("GET", `/cards/${id}`, `reading card ${ref}`, { fields: CARD_FIELDS });
	};
	const checklists = (epic: Card) =>
		call<Checklist[]>(
			"GET",
			`/cards/${epic.id}/checklists`,
			`reading the checklists of ${epic.id}`,
		);

	/** The epic card's item for `sub`, added (with the checklist) when missing: never twice. */
	const listTask = async (epic: Card, sub: Card) => {
		const lists = await checklists(epic);
		let tasks = lists.find((l) => l.name === TASKS_CHECKLIST);
		if (tasks?.checkItems.some((i) => namesCard(i.name, sub.shortLink))) return;
		tasks ??= await call<Checklist>(
			"POST",
			`/cards/${epic.id}/checklists`,
			"adding the tasks checklist",
			{
				name: TASKS_CHECKLIST,
			},
		);
		await call(
			"POST",
			`/checklists/${tasks.id}/checkItems`,
			`listing ${sub.shortLink} on ${epic.id}`,
			{
				name: sub.shortUrl ?? sub.url,
			},
		);
	};

	return {
		async findSubIssue(epicId, marker) {
			checkMarker(marker);
			const epic = await card(epicId);
			// Archived cards too: a task's card is never made twice.
			const cards = await call<Card[]>(
				"GET",
				`/boards/${epic.idBoard}/cards/all`,
				"listing cards",
				{
					fields: CARD_FIELDS,
				},
			);
			const found = cards.find((c) => c.id !== epic.id && carriesMarker(c.desc, marker));
			if (!found) return undefined;
			// Created before a crash kept it off the checklist: list it now.
			await listTask(epic, found);
			return toCreated(found);
		},

		async createSubIssue(epicId, input: SubIssueInput) {
			checkSubIssue(input);
			const epic = await card(epicId);
			const list = await listNamed(auth, baseUrl, epic.idBoard, input.state);
			const made = await call<Card>("POST", "/cards", `creating a card for "${input.title}"`, {
				idList: list.id,
				name: input.title,
				desc: input.body,
				pos: "bottom",
			});
			await listTask(epic, made);
			return toCreated(made);
		},

		/** Trello has no relations: the card's description says what it waits for. */
		async addBlocker() {},

		async editComment(issueId, commentId, body) {
			await call(
				"PUT",
				`/cards/${encodeURIComponent(cardRef(issueId))}/actions/${encodeURIComponent(commentId)}/comments`,
				`editing comment ${commentId} on ${issueId}`,
				{ text: body },
			);
		},

		async addLabel(issueId, label) {
			const target = await card(issueId);
			const labels = await boardLabels(auth, baseUrl, target.idBoard);
			const found =
				labels.find((l) => sameName(l.name, label)) ??
				(await call<Named>(
					"POST",
					`/boards/${target.idBoard}/labels`,
					`creating label "${label}"`,
					{
						name: label,
						color: LABEL_COLOR,
					},
				));
			if (target.idLabels?.includes(found.id)) return;
			await call("POST", `/cards/${target.id}/idLabels`, `adding label "${label}" to ${issueId}`, {
				value: found.id,
			});
		},

		async checkTask(epicId, subIssue) {
			const epic = await card(epicId);
			const tasks = (await checklists(epic)).find((l) => l.name === TASKS_CHECKLIST);
			const shortLink = subIssue.key ?? cardRef(subIssue.url ?? subIssue.id);
			const item = tasks?.checkItems.find((i) => namesCard(i.name, shortLink));
			if (!item || item.state === "complete") return;
			await call(
				"PUT",
				`/cards/${epic.id}/checkItem/${item.id}`,
				`ticking ${shortLink} on ${epic.id}`,
				{ state: "complete" },
			);
		},
	};
}
