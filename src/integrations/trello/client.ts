import { sameName } from "../../domain/workflow";
import {
	type EpicTracker,
	type IssueQuery,
	type Tracker,
	TrackerError,
	type TrackerIssue,
} from "../tracker";
import { boardLabels, listNamed, type Named } from "./board";
import { trelloEpics } from "./epics";
import { TRELLO_API_URL, type TrelloAuth, trelloCall, trelloRequest } from "./http";

// Trello through its REST API, with the original CLI's calls
// (docs/trackers.md › Using it with Trello): lists are the workflow states, labels are matched by
// name, the PR is a card attachment.

const CARD_FIELDS = "name,desc,url,shortLink,idBoard,idList,labels,closed";

interface Card {
	id: string;
	name: string;
	desc?: string;
	url?: string;
	shortLink?: string;
	idBoard?: string;
	idList?: string;
	idLabels?: string[];
	labels?: Named[];
	/** Archived. */
	closed?: boolean;
	/** With `list=true`: the list the card is in. */
	list?: Named;
}

/** A card's short link from a card URL (https://trello.com/c/AbCd1234/…), else the ref as given. */
export function trelloCardRef(ref: string): string {
	return ref.match(/\/c\/([A-Za-z0-9]+)/)?.[1] ?? ref.trim();
}

/** The card as the tracker port returns it; `list` is the name of the list it is in. */
function toIssue(card: Card, list: string): TrackerIssue {
	return {
		id: card.id,
		key: card.shortLink,
		title: card.name,
		description: card.desc ?? "",
		url: card.url,
		teamId: card.idBoard,
		labels: card.labels?.map((l) => l.name) ?? [],
		state: list,
		closed: card.closed === true,
	};
}

export class TrelloTracker implements Tracker {
	readonly name = "trello" as const;
	readonly epics: EpicTracker;

	constructor(
		private readonly auth: TrelloAuth,
		private readonly baseUrl: string = TRELLO_API_URL,
	) {
		this.epics = trelloEpics(auth, baseUrl, trelloCardRef);
	}

	private request<T>(
		method: string,
		path: string,
		what: string,
		params?: Record<string, string>,
	): Promise<{ status: number; body: T | undefined }> {
		return trelloRequest<T>(this.auth, this.baseUrl, method, path, what, params);
	}

	private call<T>(
		method: string,
		path: string,
		what: string,
		params?: Record<string, string>,
	): Promise<T> {
		return trelloCall<T>(this.auth, this.baseUrl, method, path, what, params);
	}

	private get<T>(path: string, what: string, params?: Record<string, string>): Promise<T> {
		return this.call<T>("GET", path, what, params);
	}

	private async card(
		ref: string,
		fields: string,
		params: Record<string, string> = {},
	): Promise<Card> {
		const id = trelloCardRef(ref);
		const res = await this.request<Card>(
			"GET",
			`/cards/${encodeURIComponent(id)}`,
			`reading card ${id}`,
			{ fields, ...params },
		);
		if (!res.body) throw new TrackerError(`Trello card ${id} was not found`, false);
		return res.body;
	}

	/** The card with the list it is in (one request: `list=true`). */
	async fetchIssue(ref: string): Promise<TrackerIssue> {
		const card = await this.card(ref, CARD_FIELDS, { list: "true" });
		return toIssue(card, card.list?.name ?? "");
	}

	private async boardByName(name: string): Promise<Named> {
		const boards = await this.get<Named[]>("/members/me/boards", "listing boards", {
			fields: "name",
		});
		const board = boards.find((b) => sameName(b.name, name) || b.id === name);
		if (!board)
			throw new TrackerError(
				`Trello board "${name}" not found; available: ${boards.map((b) => b.name).join(", ")}`,
				false,
			);
		return board;
	}

	private listOf(boardId: string, name: string): Promise<Named> {
		return listNamed(this.auth, this.baseUrl, boardId, name);
	}

	private labelsOf(boardId: string): Promise<Named[]> {
		return boardLabels(this.auth, this.baseUrl, boardId);
	}

	async nextIssues(query: IssueQuery, limit = 50): Promise<TrackerIssue[]> {
		if (!query.team)
			throw new TrackerError("Trello needs source_config.team (the board's name)", false);
		const board = await this.boardByName(query.team);
		const list = await this.listOf(board.id, query.state);
		const label = (await this.labelsOf(board.id)).find((l) => sameName(l.name, query.label));
		if (!label) return [];
		const cards = await this.get<Card[]>(`/lists/${list.id}/cards`, "listing cards", {
			fields: `${CARD_FIELDS},idLabels`,
		});
		// Trello has no priority: the list's order is the team's order.
		return cards
			.filter((c) => c.idLabels?.includes(label.id))
			.slice(0, limit)
			.map((c) => toIssue(c, list.name));
	}

	async moveTo(issueId: string, state: string): Promise<void> {
		const card = await this.card(issueId, "idBoard,idList");
		const list = await this.listOf(card.idBoard as string, state);
		if (card.idList === list.id) return;
		await this.call("PUT", `/cards/${card.id}`, `moving card ${card.id} to "${state}"`, {
			idList: list.id,
		});
	}

	async comment(issueId: string, body: string): Promise<string> {
		const action = await this.call<{ id: string }>(
			"POST",
			`/cards/${issueId}/actions/comments`,
			`commenting on ${issueId}`,
			{ text: body },
		);
		return action.id;
	}

	async attachLink(issueId: string, url: string, title: string): Promise<void> {
		const existing = await this.get<{ url: string }[]>(
			`/cards/${issueId}/attachments`,
			`reading the attachments of ${issueId}`,
			{ fields: "url" },
		);
		if (existing.some((a) => a.url === url)) return; // a resumed run attaches once
		await this.call("POST", `/cards/${issueId}/attachments`, `attaching ${url} to ${issueId}`, {
			url,
			name: title,
		});
	}

	async removeLabel(issueId: string, label: string): Promise<void> {
		const card = await this.card(issueId, "idBoard,idLabels");
		const labels = await this.labelsOf(card.idBoard as string);
		const present = labels.filter((l) => sameName(l.name, label) && card.idLabels?.includes(l.id));
		// A 404 means the label is already gone.
		for (const l of present)
			await this.request(
				"DELETE",
				`/cards/${card.id}/idLabels/${l.id}`,
				`removing label "${label}" from ${card.id}`,
			);
	}
}
