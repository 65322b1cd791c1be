// In-memory state of the Trello REST double, with Trello's record shapes. Every change made through
// the API (or through a test's "human" helpers) is recorded as a Trello action, as Trello does;
// actions are what webhooks deliver.
import { randomBytes } from "node:crypto";

export interface TrelloMember {
	id: string;
	username: string;
	fullName: string;
}

export interface TrelloBoard {
	id: string;
	name: string;
	shortLink: string;
	closed: boolean;
}

export interface TrelloList {
	id: string;
	idBoard: string;
	name: string;
	pos: number;
	closed: boolean;
}

export interface TrelloLabel {
	id: string;
	idBoard: string;
	name: string;
	color: string | null;
}

interface TrelloAttachment {
	id: string;
	name: string;
	url: string;
	idMember: string;
	date: string;
}

export interface TrelloCard {
	id: string;
	idShort: number;
	shortLink: string;
	name: string;
	desc: string;
	idBoard: string;
	idList: string;
	idLabels: string[];
	idMembers: string[];
	pos: number;
	closed: boolean;
	dateLastActivity: string;
	attachments: TrelloAttachment[];
}

export interface TrelloCheckItem {
	id: string;
	idChecklist: string;
	name: string;
	state: "complete" | "incomplete";
	pos: number;
}

export interface TrelloChecklist {
	id: string;
	idBoard: string;
	idCard: string;
	name: string;
	pos: number;
	checkItems: TrelloCheckItem[];
}

export interface TrelloAction {
	id: string;
	idMemberCreator: string;
	type: string;
	date: string;
	data: Record<string, unknown>;
	memberCreator: TrelloMember;
}

export interface TrelloWebhookRec {
	id: string;
	description: string;
	idModel: string;
	callbackURL: string;
	active: boolean;
	consecutiveFailures: number;
	firstConsecutiveFailDate: string | null;
	/** The token that created it: webhooks belong to tokens. */
	token: string;
}

/** A 24-hex id like Trello's (MongoDB ObjectIds: a timestamp first, so ids sort by creation). */
export function trelloId(): string {
	const time = Math.floor(Date.now() / 1000)
		.toString(16)
		.padStart(8, "0");
	return time + randomBytes(8).toString("hex");
}

const SHORT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
function shortLink(): string {
	return Array.from(randomBytes(8), (b) => SHORT[b % SHORT.length]).join("");
}

const slug = (text: string) =>
	text
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, "-")
		.replace(/^-+|-+$/g, "");

export class TrelloStore {
	readonly members: TrelloMember[] = [];
	readonly boards: TrelloBoard[] = [];
	readonly lists: TrelloList[] = [];
	readonly labels: TrelloLabel[] = [];
	readonly cards: TrelloCard[] = [];
	readonly actions: TrelloAction[] = [];
	readonly webhooks: TrelloWebhookRec[] = [];
	readonly checklists: TrelloChecklist[] = [];
	/** Called for every new action (the server delivers it to matching webhooks). */
	onAction: (action: TrelloAction) => void = () => {};
	private boardMembers = new Map<string, Set<string>>();

	constructor(readonly me: TrelloMember) {
		this.members.push(me);
	}

	addMember(fullName: string, username = slug(fullName).replace(/-/g, "")): TrelloMember {
		const member = { id: trelloId(), username, fullName };
		this.members.push(member);
		return member;
	}

	/** A board the token's member belongs to, with its lists and labels (by name). */
	addBoard(name: string, lists: string[] = [], labels: string[] = []): TrelloBoard {
		const board = { id: trelloId(), name, shortLink: shortLink(), closed: false };
		this.boards.push(board);
		this.boardMembers.set(board.id, new Set([this.me.id]));
		lists.forEach((l, i) => {
			this.lists.push({
				id: trelloId(),
				idBoard: board.id,
				name: l,
				pos: (i + 1) * 16384,
				closed: false,
			});
		});
		for (const l of labels) this.addLabel(board.id, l);
		return board;
	}

	addLabel(idBoard: string, name: string, color: string | null = "green"): TrelloLabel {
		const label = { id: trelloId(), idBoard, name, color };
		this.labels.push(label);
		return label;
	}

	addCard(
		idBoard: string,
		listName: string,
		fields: { name: string; desc?: string; labels?: string[] },
	): TrelloCard {
		const list = this.mustList(idBoard, listName);
		const idShort = this.cards.filter((c) => c.idBoard === idBoard).length + 1;
		const card: TrelloCard = {
			id: trelloId(),
			idShort,
			shortLink: shortLink(),
			name: fields.name,
			desc: fields.desc ?? "",
			idBoard,
			idList: list.id,
			idLabels: (fields.labels ?? []).map(
				(n) => (this.labelByName(idBoard, n) ?? this.addLabel(idBoard, n)).id,
			),
			idMembers: [],
			pos: (this.cards.filter((c) => c.idList === list.id).length + 1) * 16384,
			closed: false,
			dateLastActivity: new Date().toISOString(),
			attachments: [],
		};
		this.cards.push(card);
		return card;
	}

	/** A card as Lisa creates it (POST /1/cards): at the bottom of the list, recorded as createCard. */
	createCard(
		list: TrelloList,
		fields: { name: string; desc?: string },
		by: TrelloMember,
	): TrelloCard {
		const card = this.addCard(list.idBoard, list.name, fields);
		this.record(by, "createCard", card, {});
		return card;
	}

	addChecklist(card: TrelloCard, name: string): TrelloChecklist {
		const pos = (this.checklistsOf(card).length + 1) * 16384;
		const checklist = {
			id: trelloId(),
			idBoard: card.idBoard,
			idCard: card.id,
			name,
			pos,
			checkItems: [],
		};
		this.checklists.push(checklist);
		return checklist;
	}

	addCheckItem(checklist: TrelloChecklist, name: string, checked = false): TrelloCheckItem {
		const item: TrelloCheckItem = {
			id: trelloId(),
			idChecklist: checklist.id,
			name,
			state: checked ? "complete" : "incomplete",
			pos: (checklist.checkItems.length + 1) * 16384,
		};
		checklist.checkItems.push(item);
		return item;
	}

	// ---- lookups ----

	checklistsOf(card: TrelloCard): TrelloChecklist[] {
		return this.checklists.filter((c) => c.idCard === card.id).sort((a, b) => a.pos - b.pos);
	}

	/** The card's comments as Trello keeps them (commentCard actions), oldest first. */
	commentsOf(card: TrelloCard): TrelloAction[] {
		return this.actions.filter(
			(a) => a.type === "commentCard" && (a.data.card as { id?: string })?.id === card.id,
		);
	}

	board(id: string): TrelloBoard | undefined {
		return this.boards.find((b) => b.id === id || b.shortLink === id);
	}

	isBoardMember(idBoard: string, idMember: string): boolean {
		return this.boardMembers.get(idBoard)?.has(idMember) ?? false;
	}

	list(id: string): TrelloList | undefined {
		return this.lists.find((l) => l.id === id);
	}

	mustList(idBoard: string, name: string): TrelloList {
		const list = this.lists.find(
			(l) => l.idBoard === idBoard && l.name.toLowerCase() === name.toLowerCase(),
		);
		if (!list) throw new Error(`Trello double: board ${idBoard} has no list "${name}"`);
		return list;
	}

	labelByName(idBoard: string, name: string): TrelloLabel | undefined {
		return this.labels.find(
			(l) => l.idBoard === idBoard && l.name.toLowerCase() === name.toLowerCase(),
		);
	}

	/** By id or short link. */
	card(idOrShortLink: string): TrelloCard | undefined {
		return this.cards.find((c) => c.id === idOrShortLink || c.shortLink === idOrShortLink);
	}

	mustCard(idOrShortLink: string): TrelloCard {
		const card = this.card(idOrShortLink);
		if (!card) throw new Error(`Trello double: no card ${idOrShortLink}`);
		return card;
	}

	listName(card: TrelloCard): string {
		return this.list(card.idList)?.name ?? "";
	}

	labelNames(card: TrelloCard): string[] {
		return card.idLabels.map((id) => this.labels.find((l) => l.id === id)?.name ?? id);
	}

	// ---- JSON shapes ----

	cardUrl(card: TrelloCard): string {
		return `https://trello.com/c/${card.shortLink}/${card.idShort}-${slug(card.name)}`;
	}

	labelJson(label: TrelloLabel) {
		return { id: label.id, idBoard: label.idBoard, name: label.name, color: label.color };
	}

	cardJson(card: TrelloCard): Record<string, unknown> {
		return {
			id: card.id,
			idShort: card.idShort,
			shortLink: card.shortLink,
			shortUrl: `https://trello.com/c/${card.shortLink}`,
			url: this.cardUrl(card),
			name: card.name,
			desc: card.desc,
			idBoard: card.idBoard,
			idList: card.idList,
			idLabels: [...card.idLabels],
			labels: card.idLabels.flatMap((id) => {
				const label = this.labels.find((l) => l.id === id);
				return label ? [this.labelJson(label)] : [];
			}),
			idMembers: [...card.idMembers],
			pos: card.pos,
			closed: card.closed,
			dateLastActivity: card.dateLastActivity,
		};
	}

	// ---- changes, each recorded as the action Trello records ----

	private cardRef(card: TrelloCard) {
		return { id: card.id, name: card.name, idShort: card.idShort, shortLink: card.shortLink };
	}

	private boardRef(idBoard: string) {
		const board = this.board(idBoard);
		return { id: idBoard, name: board?.name ?? "", shortLink: board?.shortLink ?? "" };
	}

	private record(
		by: TrelloMember,
		type: string,
		card: TrelloCard,
		data: Record<string, unknown>,
	): TrelloAction {
		const list = this.list(card.idList);
		const action: TrelloAction = {
			id: trelloId(),
			idMemberCreator: by.id,
			type,
			date: new Date().toISOString(),
			data: {
				card: this.cardRef(card),
				board: this.boardRef(card.idBoard),
				...(list && type !== "updateCard" ? { list: { id: list.id, name: list.name } } : {}),
				...data,
			},
			memberCreator: { ...by },
		};
		card.dateLastActivity = action.date;
		this.actions.push(action);
		this.onAction(action);
		return action;
	}

	moveCard(card: TrelloCard, idList: string, by: TrelloMember): TrelloAction | undefined {
		if (card.idList === idList) return undefined;
		const before = this.list(card.idList);
		const after = this.list(idList);
		card.idList = idList;
		return this.record(by, "updateCard", card, {
			card: { ...this.cardRef(card), idList },
			old: { idList: before?.id },
			listBefore: { id: before?.id, name: before?.name },
			listAfter: { id: after?.id, name: after?.name },
		});
	}

	addLabelToCard(card: TrelloCard, label: TrelloLabel, by: TrelloMember): TrelloAction | undefined {
		if (card.idLabels.includes(label.id)) return undefined;
		card.idLabels.push(label.id);
		return this.record(by, "addLabelToCard", card, {
			label: { id: label.id, name: label.name, color: label.color },
			text: label.name,
		});
	}

	removeLabelFromCard(card: TrelloCard, label: TrelloLabel, by: TrelloMember): TrelloAction {
		card.idLabels = card.idLabels.filter((id) => id !== label.id);
		return this.record(by, "removeLabelFromCard", card, {
			label: { id: label.id, name: label.name, color: label.color },
			text: label.name,
		});
	}

	comment(card: TrelloCard, text: string, by: TrelloMember): TrelloAction {
		return this.record(by, "commentCard", card, { text });
	}

	attach(card: TrelloCard, url: string, name: string, by: TrelloMember): TrelloAction {
		const attachment = {
			id: trelloId(),
			name,
			url,
			idMember: by.id,
			date: new Date().toISOString(),
		};
		card.attachments.push(attachment);
		return this.record(by, "addAttachmentToCard", card, {
			attachment: { id: attachment.id, name, url },
		});
	}
}
