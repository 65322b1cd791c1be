import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trelloSignedBytes } from "../../../src/integrations/trello/webhook";
import { startTrelloDouble, type TrelloDouble } from "./server";

// The double itself: Trello's auth answers, field selection, and webhooks (HEAD check, signed
// deliveries of every action on the watched model).

let trello: TrelloDouble;
let receiver: {
	url: string;
	got: { method: string; body: string; signature?: string }[];
	status: number;
	close(): Promise<void>;
};

function read(req: IncomingMessage): Promise<string> {
	return new Promise((resolve) => {
		let body = "";
		req.on("data", (c: Buffer) => {
			body += c.toString();
		});
		req.on("end", () => resolve(body));
	});
}

beforeAll(async () => {
	trello = await startTrelloDouble();
	const got: { method: string; body: string; signature?: string }[] = [];
	const server = createServer(async (req, res) => {
		got.push({
			method: req.method ?? "",
			body: await read(req),
			signature: req.headers["x-trello-webhook"] as string | undefined,
		});
		res.statusCode = receiver.status;
		res.end();
	});
	await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
	receiver = {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
		got,
		status: 200,
		close: () => new Promise((r) => server.close(() => r())),
	};
});
afterAll(async () => {
	await trello.stop();
	await receiver.close();
});

const call = (method: string, path: string, auth = true) =>
	fetch(
		`${trello.url}${path}${path.includes("?") ? "&" : "?"}${auth ? `key=${trello.apiKey}&token=${trello.token}` : ""}`,
		{ method },
	);

describe("Trello double", () => {
	it("answers Trello's auth errors and selects fields", async () => {
		const noKey = await call("GET", "/members/me", false);
		expect([noKey.status, await noKey.text()]).toEqual([401, "invalid key"]);
		const badToken = await fetch(`${trello.url}/members/me`, {
			headers: { authorization: `OAuth oauth_consumer_key="${trello.apiKey}", oauth_token="nope"` },
		});
		expect([badToken.status, await badToken.text()]).toEqual([401, "invalid token"]);
		const me = await (await call("GET", "/members/me?fields=username")).json();
		expect(me).toEqual({ id: trello.me.id, username: "lisabot" });
		const missing = await call("GET", "/cards/0123456789abcdef01234567");
		expect([missing.status, await missing.text()]).toEqual([
			404,
			"The requested resource was not found.",
		]);
		expect((await call("GET", "/cards/bad id")).status).toBe(400);
	});

	it("creates a webhook only when the callback answers the HEAD check, then delivers signed actions", async () => {
		const board = trello.store.addBoard("Web", ["Todo", "Doing"], ["lisa"]);
		const card = trello.store.addCard(board.id, "Todo", { name: "Card" });
		const create = () =>
			call("POST", `/webhooks?callbackURL=${encodeURIComponent(receiver.url)}&idModel=${board.id}`);

		receiver.status = 410;
		const refused = await create();
		expect(refused.status).toBe(400);
		expect(await refused.text()).toMatch(/did not return 200 status code, got 410/);
		receiver.status = 200;
		const created = await create();
		expect(created.status).toBe(200);
		const webhook = (await created.json()) as { id: string; callbackURL: string };
		expect(receiver.got.filter((g) => g.method === "HEAD")).toHaveLength(2);

		trello.human("Ada").moveCard(card, "Doing");
		await trello.settle();
		const post = receiver.got.find((g) => g.method === "POST");
		const payload = JSON.parse(post?.body ?? "{}");
		expect(payload.action).toMatchObject({
			type: "updateCard",
			data: { listBefore: { name: "Todo" }, listAfter: { name: "Doing" }, card: { id: card.id } },
			memberCreator: { fullName: "Ada" },
		});
		expect(payload.webhook).toMatchObject({
			id: webhook.id,
			idModel: board.id,
			callbackURL: receiver.url,
		});
		expect(
			trelloSignedBytes(
				Buffer.from(post?.body ?? ""),
				receiver.url,
				trello.appSecret,
				post?.signature ?? "",
			),
		).toBeDefined();
		expect(trello.deliveries.map((d) => [d.actionType, d.status])).toEqual([["updateCard", 200]]);

		expect((await call("DELETE", `/webhooks/${webhook.id}`)).status).toBe(200);
		trello.human("Ada").comment(card, "after the webhook is gone");
		await trello.settle();
		expect(trello.deliveries).toHaveLength(1);
	});

	it("creates cards, checklists and labels, and lets only a comment's author edit it", async () => {
		const board = trello.store.addBoard("Epics", ["Todo"]);
		const other = trello.store.addBoard("Elsewhere", ["Todo"]);
		const todo = trello.store.mustList(board.id, "Todo");
		const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;
		const made = await call("POST", `/cards${q({ idList: todo.id, name: "Task", desc: "d" })}`);
		const card = (await made.json()) as { id: string; shortLink: string };
		expect(trello.store.mustCard(card.id)).toMatchObject({ name: "Task", desc: "d" });
		expect((await call("POST", `/cards${q({ idList: "nope", name: "x" })}`)).status).toBe(400);
		// All the board's cards, archived ones too, only with `all`.
		trello.store.mustCard(card.id).closed = true;
		const open = (await (await call("GET", `/boards/${board.id}/cards`)).json()) as unknown[];
		const all = (await (await call("GET", `/boards/${board.id}/cards/all`)).json()) as unknown[];
		expect([open.length, all.length]).toEqual([0, 1]);
		expect((await call("GET", `/boards/${other.id}/cards/bogus`)).status).toBe(400);

		const list = (await (
			await call("POST", `/cards/${card.id}/checklists${q({ name: "Lisa tasks" })}`)
		).json()) as { id: string };
		const item = (await (
			await call(
				"POST",
				`/checklists/${list.id}/checkItems${q({ name: "https://trello.com/c/x" })}`,
			)
		).json()) as { id: string; state: string };
		expect(item.state).toBe("incomplete");
		await call("PUT", `/cards/${card.id}/checkItem/${item.id}${q({ state: "complete" })}`);
		const lists = (await (await call("GET", `/cards/${card.id}/checklists`)).json()) as {
			checkItems: { state: string }[];
		}[];
		expect(lists.map((l) => l.checkItems.map((i) => i.state))).toEqual([["complete"]]);
		expect(
			(await call("PUT", `/cards/${card.id}/checkItem/${item.id}${q({ state: "done" })}`)).status,
		).toBe(400);

		expect(
			(await call("POST", `/boards/${board.id}/labels${q({ name: "needs-spec" })}`)).status,
		).toBe(400);
		const label = await call(
			"POST",
			`/boards/${board.id}/labels${q({ name: "needs-spec", color: "orange" })}`,
		);
		expect(await label.json()).toMatchObject({
			name: "needs-spec",
			color: "orange",
			idBoard: board.id,
		});

		const target = trello.store.mustCard(card.id);
		const mine = trello.store.comment(target, "Planning", trello.me);
		const theirs = trello.human().comment(target, "Nice");
		const edit = (id: string) =>
			call("PUT", `/cards/${card.id}/actions/${id}/comments${q({ text: "Edited" })}`);
		expect((await edit(mine.id)).status).toBe(200);
		expect((await edit(theirs.id)).status).toBe(401);
		expect((await edit("000000000000000000000000")).status).toBe(404);
		expect(trello.store.commentsOf(target).map((a) => a.data.text)).toEqual(["Edited", "Nice"]);
	});
});
