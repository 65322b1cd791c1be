// A wire-faithful local double of the Trello REST API (the calls Lisa and the original CLI make),
// with Trello's webhooks: `POST /1/webhooks` checks the callback URL with a HEAD, then every action
// on the watched model is POSTed to it, signed with X-Trello-Webhook as Trello signs.
//
//   const trello = await startTrelloDouble({ appSecret });
//   const board = trello.store.addBoard("Web", ["Todo", "In Progress", "In Review"], ["lisa"]);
//   const card = trello.store.addCard(board.id, "Todo", { name: "Fix it", labels: ["lisa"] });
//   new TrelloTracker({ apiKey: trello.apiKey, token: trello.token }, trello.url) …
import { createHmac } from "node:crypto";
import { type Context, Hono } from "hono";
import { serveLocal } from "../serve";
import {
	type TrelloAction,
	type TrelloCard,
	type TrelloMember,
	TrelloStore,
	type TrelloWebhookRec,
	trelloId,
} from "./state";

export type * from "./state";
export { trelloId } from "./state";

const DEFAULT_TRELLO_KEY = "0123456789abcdef0123456789abcdef";
const DEFAULT_TRELLO_TOKEN = "ATTA0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd";

/**
 * `X-Trello-Webhook`: base64 HMAC-SHA1 of body + callback URL with the app secret. Trello hashes
 * the text as a "binary" string (each character's low byte), which is what this does.
 */
export function signTrello(body: string, callbackUrl: string, appSecret: string): string {
	return createHmac("sha1", appSecret)
		.update(Buffer.from(body + callbackUrl, "latin1"))
		.digest("base64");
}

interface TrelloDelivery {
	webhookId: string;
	actionId: string;
	actionType: string;
	callbackURL: string;
	status: number;
	/** The receiver's answer (JSON parsed when possible). */
	response: unknown;
}

interface TrelloRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	status?: number;
}

export interface TrelloDouble {
	/** Base URL with the `/1` prefix, for TRELLO_API_URL. */
	readonly url: string;
	readonly apiKey: string;
	readonly token: string;
	readonly appSecret: string;
	readonly store: TrelloStore;
	readonly requests: TrelloRequest[];
	readonly deliveries: TrelloDelivery[];
	/** The token's member (Lisa). */
	readonly me: TrelloMember;
	/** A person acting in Trello's UI: moves, labels and comments recorded (and delivered) as theirs. */
	human(name?: string): {
		member: TrelloMember;
		moveCard(card: TrelloCard, listName: string): TrelloAction | undefined;
		addLabel(card: TrelloCard, labelName: string): TrelloAction | undefined;
		comment(card: TrelloCard, text: string): TrelloAction;
	};
	/** The body Trello would POST for this action to the webhook. */
	webhookBody(action: TrelloAction, webhook?: TrelloWebhookRec): string;
	/** Makes the next `n` API requests answer `status` (after auth, before anything happens). */
	failNext(n: number, status: number): void;
	/** Resolves once every delivery started so far has been answered. */
	settle(): Promise<void>;
	stop(): Promise<void>;
}

type C = Context;

const text = (status: number, body: string) =>
	new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
const json = (body: unknown, status = 200) =>
	new Response(JSON.stringify(body), {
		status,
		headers: { "content-type": "application/json; charset=utf-8" },
	});
const NOT_FOUND = () => text(404, "The requested resource was not found.");
const isId = (v: string) => /^[0-9a-f]{24}$/.test(v);

/** `fields=a,b` (or `all`): Trello returns only those fields, plus the id. */
function pick(obj: Record<string, unknown>, fields: string | undefined): Record<string, unknown> {
	if (!fields || fields === "all") return obj;
	const out: Record<string, unknown> = { id: obj.id };
	for (const f of fields.split(",").map((x) => x.trim())) if (f && f in obj) out[f] = obj[f];
	return out;
}

/** Params travel in the query string (as the original CLI sends them) or a JSON / form body. */
async function params(c: C): Promise<Record<string, string>> {
	const out: Record<string, string> = { ...c.req.query() };
	const type = c.req.header("content-type") ?? "";
	if (type.includes("application/json")) {
		const body = (await c.req.json().catch(() => ({}))) as Record<string, unknown>;
		for (const [k, v] of Object.entries(body)) if (v !== undefined) out[k] = String(v);
	} else if (type.includes("application/x-www-form-urlencoded")) {
		for (const [k, v] of new URLSearchParams(await c.req.text())) out[k] = v;
	}
	return out;
}

export async function startTrelloDouble(
	opts: { apiKey?: string; token?: string; appSecret?: string; port?: number } = {},
): Promise<TrelloDouble> {
	const apiKey = opts.apiKey ?? DEFAULT_TRELLO_KEY;
	const token = opts.token ?? DEFAULT_TRELLO_TOKEN;
	const appSecret = opts.appSecret ?? "trello-app-secret-0123456789";
	const me: TrelloMember = { id: trelloId(), username: "lisabot", fullName: "Lisa" };
	const store = new TrelloStore(me);
	const requests: TrelloRequest[] = [];
	const deliveries: TrelloDelivery[] = [];
	const pending = new Set<Promise<void>>();
	const failures: number[] = [];

	const webhookBody = (action: TrelloAction, webhook?: TrelloWebhookRec) => {
		const board = store.board(String((action.data.board as { id?: string })?.id ?? ""));
		return JSON.stringify({
			action,
			model: board ? { id: board.id, name: board.name, shortLink: board.shortLink } : {},
			webhook: webhook
				? {
						id: webhook.id,
						description: webhook.description,
						idModel: webhook.idModel,
						callbackURL: webhook.callbackURL,
						active: webhook.active,
					}
				: {},
		});
	};

	const deliver = async (webhook: TrelloWebhookRec, action: TrelloAction) => {
		const body = webhookBody(action, webhook);
		let status = 0;
		let response: unknown;
		try {
			const res = await fetch(webhook.callbackURL, {
				method: "POST",
				body,
				headers: {
					"content-type": "application/json",
					"user-agent": "Trello",
					"x-trello-webhook": signTrello(body, webhook.callbackURL, appSecret),
				},
			});
			status = res.status;
			const raw = await res.text();
			try {
				response = JSON.parse(raw);
			} catch {
				response = raw;
			}
		} catch (err) {
			response = (err as Error).message;
		}
		if (status >= 200 && status < 300) {
			webhook.consecutiveFailures = 0;
			webhook.firstConsecutiveFailDate = null;
		} else {
			webhook.consecutiveFailures++;
			webhook.firstConsecutiveFailDate ??= new Date().toISOString();
		}
		deliveries.push({
			webhookId: webhook.id,
			actionId: action.id,
			actionType: action.type,
			callbackURL: webhook.callbackURL,
			status,
			response,
		});
	};

	store.onAction = (action) => {
		const data = action.data as Record<string, { id?: string } | undefined>;
		const models = [data.board?.id, data.card?.id, data.list?.id, data.listAfter?.id];
		for (const webhook of store.webhooks)
			if (webhook.active && models.includes(webhook.idModel)) {
				const p = deliver(webhook, action).finally(() => pending.delete(p));
				pending.add(p);
			}
	};

	const app = new Hono();
	app.use(async (c, next) => {
		const entry: TrelloRequest = { method: c.req.method, path: c.req.path, query: c.req.query() };
		requests.push(entry);
		await next();
		entry.status = c.res.status;
	});
	// Auth: the OAuth-style header the original CLI sends, or key/token query params.
	app.use("/1/*", async (c, next) => {
		const header = c.req.header("authorization") ?? "";
		const key = header.match(/oauth_consumer_key="([^"]*)"/)?.[1] ?? c.req.query("key");
		const tok = header.match(/oauth_token="([^"]*)"/)?.[1] ?? c.req.query("token");
		if (key !== apiKey) return text(401, "invalid key");
		if (tok !== token) return text(401, "invalid token");
		const failure = failures.shift();
		if (failure) return text(failure, `Injected failure (HTTP ${failure})`);
		await next();
	});

	const cardOf = (c: C): TrelloCard | Response => {
		const id = c.req.param("id") ?? "";
		const card = store.card(id);
		if (card) return card;
		return isId(id) || /^[A-Za-z0-9]{8}$/.test(id) ? NOT_FOUND() : text(400, "invalid id");
	};
	const boardOf = (c: C) => {
		const board = store.board(c.req.param("id") ?? "");
		return board && store.isBoardMember(board.id, me.id) ? board : undefined;
	};

	app.get("/1/members/me", (c) => json(pick({ ...me }, c.req.query("fields"))));
	app.get("/1/members/me/boards", (c) =>
		json(
			store.boards
				.filter((b) => store.isBoardMember(b.id, me.id) && !b.closed)
				.map((b) => pick({ ...b }, c.req.query("fields"))),
		),
	);
	app.get("/1/boards/:id/lists", (c) => {
		const board = boardOf(c);
		if (!board) return NOT_FOUND();
		return json(
			store.lists
				.filter((l) => l.idBoard === board.id && !l.closed)
				.sort((a, b) => a.pos - b.pos)
				.map((l) => pick({ ...l }, c.req.query("fields"))),
		);
	});
	app.get("/1/boards/:id/labels", (c) => {
		const board = boardOf(c);
		if (!board) return NOT_FOUND();
		return json(
			store.labels
				.filter((l) => l.idBoard === board.id)
				.map((l) => pick(store.labelJson(l), c.req.query("fields"))),
		);
	});
	app.get("/1/lists/:id/cards", (c) => {
		const list = store.list(c.req.param("id"));
		if (!list) return NOT_FOUND();
		return json(
			store.cards
				.filter((card) => card.idList === list.id && !card.closed)
				.sort((a, b) => a.pos - b.pos)
				.map((card) => pick(store.cardJson(card), c.req.query("fields"))),
		);
	});
	app.get("/1/cards/:id", (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const out = pick(store.cardJson(card), c.req.query("fields"));
		// `list=true` nests the list the card is in, as Trello does (whatever `fields` says).
		const list = store.list(card.idList);
		if (c.req.query("list") === "true" && list) out.list = { ...list };
		return json(out);
	});
	app.put("/1/cards/:id", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const p = await params(c);
		if (p.idList !== undefined) {
			const list = store.list(p.idList);
			if (!list || list.idBoard !== card.idBoard) return text(400, "invalid value for idList");
			store.moveCard(card, list.id, me);
		}
		if (p.name !== undefined) card.name = p.name;
		if (p.desc !== undefined) card.desc = p.desc;
		return json(store.cardJson(card));
	});
	app.post("/1/cards/:id/idLabels", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const { value } = await params(c);
		const label = store.labels.find((l) => l.id === value);
		if (!label || label.idBoard !== card.idBoard) return text(400, "invalid value for value");
		if (card.idLabels.includes(label.id)) return text(400, "that label is already on the card");
		store.addLabelToCard(card, label, me);
		return json([...card.idLabels]);
	});
	app.delete("/1/cards/:id/idLabels/:idLabel", (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const label = store.labels.find((l) => l.id === c.req.param("idLabel"));
		if (!label || !card.idLabels.includes(label.id)) return NOT_FOUND();
		store.removeLabelFromCard(card, label, me);
		return json({ _value: null });
	});
	app.post("/1/cards/:id/actions/comments", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const body = (await params(c)).text;
		if (!body) return text(400, "invalid value for text");
		return json(store.comment(card, body, me));
	});
	app.get("/1/cards/:id/attachments", (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		return json(card.attachments.map((a) => pick({ ...a }, c.req.query("fields"))));
	});
	app.post("/1/cards/:id/attachments", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const p = await params(c);
		if (!p.url || !/^https?:\/\//.test(p.url)) return text(400, "invalid value for url");
		const action = store.attach(card, p.url, p.name ?? p.url, me);
		const attachment = (action.data.attachment ?? {}) as Record<string, unknown>;
		return json({ ...attachment, idMember: me.id, date: action.date });
	});

	app.post("/1/cards", async (c) => {
		const p = await params(c);
		const list = p.idList ? store.list(p.idList) : undefined;
		if (!list || list.closed || !store.isBoardMember(list.idBoard, me.id))
			return text(400, "invalid value for idList");
		const card = store.createCard(list, { name: p.name ?? "", desc: p.desc }, me);
		return json(store.cardJson(card));
	});
	const boardCards = (c: C) => {
		const board = boardOf(c);
		if (!board) return NOT_FOUND();
		const filter = c.req.param("filter") ?? c.req.query("filter") ?? "open";
		if (!["all", "open", "closed", "visible"].includes(filter))
			return text(400, "invalid value for filter");
		return json(
			store.cards
				.filter((card) => card.idBoard === board.id)
				.filter((card) => filter === "all" || (filter === "closed") === card.closed)
				.map((card) => pick(store.cardJson(card), c.req.query("fields"))),
		);
	};
	app.get("/1/boards/:id/cards", boardCards);
	app.get("/1/boards/:id/cards/:filter", boardCards);
	app.post("/1/boards/:id/labels", async (c) => {
		const board = boardOf(c);
		if (!board) return NOT_FOUND();
		const p = await params(c);
		if (!p.name) return text(400, "invalid value for name");
		if (p.color === undefined) return text(400, "invalid value for color");
		const label = store.addLabel(board.id, p.name, p.color === "null" ? null : p.color);
		return json(store.labelJson(label));
	});
	app.put("/1/cards/:id/actions/:idAction/comments", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const action = store.commentsOf(card).find((a) => a.id === c.req.param("idAction"));
		if (!action) return NOT_FOUND();
		// Only a comment's author may edit it.
		if (action.idMemberCreator !== me.id)
			return text(401, "unauthorized comment permission requested");
		const body = (await params(c)).text;
		if (!body) return text(400, "invalid value for text");
		action.data.text = body;
		action.data.dateLastEdited = new Date().toISOString();
		return json(action);
	});
	app.get("/1/cards/:id/checklists", (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		return json(store.checklistsOf(card));
	});
	app.post("/1/cards/:id/checklists", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const p = await params(c);
		return json(store.addChecklist(card, p.name ?? "Checklist"));
	});
	app.post("/1/checklists/:id/checkItems", async (c) => {
		const checklist = store.checklists.find((l) => l.id === c.req.param("id"));
		if (!checklist) return NOT_FOUND();
		const p = await params(c);
		if (!p.name) return text(400, "invalid value for name");
		return json(store.addCheckItem(checklist, p.name, p.checked === "true"));
	});
	app.put("/1/cards/:id/checkItem/:idCheckItem", async (c) => {
		const card = cardOf(c);
		if (card instanceof Response) return card;
		const item = store
			.checklistsOf(card)
			.flatMap((l) => l.checkItems)
			.find((i) => i.id === c.req.param("idCheckItem"));
		if (!item) return NOT_FOUND();
		const { state } = await params(c);
		if (state !== undefined && state !== "complete" && state !== "incomplete")
			return text(400, "invalid value for state");
		if (state) item.state = state;
		return json(item);
	});

	// ---- webhooks ----
	const createWebhook = async (c: C) => {
		const p = await params(c);
		const { callbackURL, idModel } = p;
		if (!callbackURL || !/^https?:\/\//.test(callbackURL))
			return text(400, "invalid value for callbackURL");
		if (!idModel || !(store.board(idModel) || store.card(idModel) || store.list(idModel)))
			return text(400, "invalid value for idModel");
		if (store.webhooks.some((w) => w.callbackURL === callbackURL && w.idModel === idModel))
			return text(400, "A webhook with that callback, model, and token already exists");
		// Trello checks the callback with a HEAD and creates the webhook only on a 200.
		const check = await fetch(callbackURL, { method: "HEAD" }).catch(() => undefined);
		if (check?.status !== 200)
			return text(
				400,
				`URL (${callbackURL}) did not return 200 status code, got ${check?.status ?? "no answer"}`,
			);
		const webhook: TrelloWebhookRec = {
			id: trelloId(),
			description: p.description ?? "",
			idModel,
			callbackURL,
			active: p.active !== "false",
			consecutiveFailures: 0,
			firstConsecutiveFailDate: null,
			token,
		};
		store.webhooks.push(webhook);
		const { token: _t, ...shown } = webhook;
		return json(shown);
	};
	app.post("/1/webhooks", createWebhook);
	app.post("/1/tokens/:token/webhooks", createWebhook);
	app.get("/1/tokens/:token/webhooks", () =>
		json(store.webhooks.map(({ token: _t, ...shown }) => shown)),
	);
	app.delete("/1/webhooks/:id", (c) => {
		const i = store.webhooks.findIndex((w) => w.id === c.req.param("id"));
		if (i < 0) return NOT_FOUND();
		store.webhooks.splice(i, 1);
		return json({ _value: null });
	});
	app.notFound(() => NOT_FOUND());

	const { port, stop } = await serveLocal(app, opts.port);

	return {
		url: `http://127.0.0.1:${port}/1`,
		apiKey,
		token,
		appSecret,
		store,
		requests,
		deliveries,
		me,
		human(name = "Pat Human") {
			const member = store.members.find((m) => m.fullName === name) ?? store.addMember(name);
			return {
				member,
				moveCard: (card, listName) =>
					store.moveCard(card, store.mustList(card.idBoard, listName).id, member),
				addLabel: (card, labelName) => {
					const label =
						store.labelByName(card.idBoard, labelName) ?? store.addLabel(card.idBoard, labelName);
					return store.addLabelToCard(card, label, member);
				},
				comment: (card, body) => store.comment(card, body, member),
			};
		},
		webhookBody,
		failNext(n, status) {
			for (let i = 0; i < n; i++) failures.push(status);
		},
		async settle() {
			while (pending.size) await Promise.all([...pending]);
		},
		stop,
	};
}
