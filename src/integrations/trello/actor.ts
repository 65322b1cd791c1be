import { TRELLO_API_URL, type TrelloAuth, trelloCall } from "./http";

/** The id of the Trello member the token belongs to (Lisa's own actions carry it). */
export async function trelloMemberId(
	auth: TrelloAuth,
	apiUrl: string = TRELLO_API_URL,
): Promise<string> {
	const me = await trelloCall<{ id: string }>(
		auth,
		apiUrl,
		"GET",
		"/members/me",
		"reading the token's member",
		{ fields: "id" },
	);
	return me.id;
}
