import { MARKER_PATTERN } from "../../domain/comments";
import type { EpicLabels } from "../../domain/qualify";
import { sameName } from "../../domain/workflow";

// Trello trigger rules (docs/trackers.md › Using it with Trello). Pure: decides from the webhook
// payload alone.

export interface TrelloWebhook {
	action?: {
		id?: string;
		type?: string;
		/** When the action happened (ISO 8601). */
		date?: string;
		idMemberCreator?: string;
		data?: {
			card?: { id?: string; name?: string; shortLink?: string };
			label?: { id?: string; name?: string };
			listAfter?: { id?: string; name?: string };
			listBefore?: { id?: string; name?: string };
			board?: { id?: string; name?: string };
			text?: string;
		};
	};
	model?: { id?: string; name?: string };
}

export interface TrelloRules {
	label: string;
	pickFrom: string;
	/** Board name or id; actions on other boards are ignored. */
	board?: string;
	/**
	 * The epic label also triggers, as an epic run (docs/epics.md › Epics). Trello's actions do not
	 * list the card's other labels: the run's intake reads them (needs-spec among them) from the
	 * card.
	 */
	epic?: EpicLabels;
}

export type TrelloVerdict =
	| {
			trigger: true;
			cardId: string;
			cardKey?: string;
			actorId?: string;
			why: string;
			/** The epic label was added: plan the card into sub-issues. */
			kind?: "epic";
	  }
	| { trigger: false; reason: string };

export function trelloVerdict(payload: TrelloWebhook, rules: TrelloRules): TrelloVerdict {
	const action = payload.action;
	if (!action?.type) return { trigger: false, reason: "payload has no action" };
	const data = action.data ?? {};
	if (action.type === "commentCard" && MARKER_PATTERN.test(data.text ?? ""))
		return { trigger: false, reason: "Lisa's own comment (it carries Lisa's marker)" };
	const card = data.card;
	const board = data.board;
	if (rules.board && board && !sameName(board.name, rules.board) && board.id !== rules.board)
		return { trigger: false, reason: `card is on board "${board.name}", not "${rules.board}"` };
	const hit = (why: string): TrelloVerdict =>
		card?.id
			? {
					trigger: true,
					cardId: card.id,
					cardKey: card.shortLink,
					actorId: action.idMemberCreator,
					why,
				}
			: { trigger: false, reason: "action has no card" };

	if (action.type === "addLabelToCard") {
		if (sameName(data.label?.name, rules.label)) return hit(`label "${rules.label}" added`);
		if (rules.epic && sameName(data.label?.name, rules.epic.label)) {
			const verdict = hit(`label "${rules.epic.label}" added`);
			return verdict.trigger ? { ...verdict, kind: "epic" } : verdict;
		}
		const also = rules.epic ? ` or "${rules.epic.label}"` : "";
		return {
			trigger: false,
			reason: `label "${data.label?.name ?? "?"}" is not "${rules.label}"${also}`,
		};
	}
	if (action.type === "updateCard" && data.listAfter) {
		return sameName(data.listAfter.name, rules.pickFrom)
			? hit(`moved to "${rules.pickFrom}"`)
			: { trigger: false, reason: `moved to "${data.listAfter.name}", not "${rules.pickFrom}"` };
	}
	return {
		trigger: false,
		reason: `${action.type} is neither label "${rules.label}" added nor a move into "${rules.pickFrom}"`,
	};
}
