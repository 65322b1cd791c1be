import { sameName } from "../../domain/workflow";
import { TrackerError } from "../tracker";
import { type TrelloAuth, trelloCall } from "./http";

// A Trello board's lists and labels, as the tracker and its epics read them
// (docs/trackers.md › Using it with Trello).

export interface Named {
	id: string;
	name: string;
}

/** The board's list named `name` (the workflow state); the lists there are, named, when none is. */
export async function listNamed(
	auth: TrelloAuth,
	baseUrl: string,
	boardId: string,
	name: string,
): Promise<Named> {
	const lists = await trelloCall<Named[]>(
		auth,
		baseUrl,
		"GET",
		`/boards/${boardId}/lists`,
		"listing lists",
		{
			fields: "name",
		},
	);
	const list = lists.find((l) => sameName(l.name, name));
	if (!list)
		throw new TrackerError(
			`Trello list "${name}" not found on the board; available: ${lists.map((l) => l.name).join(", ")}`,
			false,
		);
	return list;
}

export const boardLabels = (auth: TrelloAuth, baseUrl: string, boardId: string): Promise<Named[]> =>
	trelloCall<Named[]>(auth, baseUrl, "GET", `/boards/${boardId}/labels`, "listing labels", {
		fields: "name",
	});
