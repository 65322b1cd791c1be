import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signTrello, type TrelloCard, trelloId } from "../doubles/trello/server";
import { createStackWorld, type StackWorld } from "../support/stack";
import { TRELLO_BOARD } from "../support/world";

// Trello as the source, end to end: the Trello double delivers its actions to Lisa's webhook the
// way Trello does (registered through the API, HEAD-checked, signed), including Lisa's own.

let w: StackWorld;
let callbackUrl: string;
const board = () => {
	const b = w.trello.store.boards.find((x) => x.name === TRELLO_BOARD);
	if (!b) throw new Error("no board");
	return b;
};

beforeAll(async () => {
	w = await createStackWorld({ source: "trello", configExtra: "limits: {max_attempts: 1}" });
	callbackUrl = `${w.url()}/webhooks/trello`;
});
afterAll(() => w.stop());

/** The delivery of `action` that the double made (after waiting for every delivery). */
async function deliveryOf(actionId: string | undefined) {
	await w.trello.settle();
	const d = w.trello.deliveries.find((x) => x.actionId === actionId);
	if (!d) throw new Error(`action ${actionId} was not delivered`);
	return d;
}

async function runsOf(card: TrelloCard) {
	return (await w.stack?.deps.store.runsOfIssue("trello", card.id)) ?? [];
}

describe("Trello webhook setup", () => {
	it("answers Trello's HEAD check, so a webhook can be registered through Trello's API", async () => {
		const head = await fetch(callbackUrl, { method: "HEAD" });
		expect(head.status).toBe(200);
		const res = await fetch(
			`${w.trello.url}/webhooks?key=${w.trello.apiKey}&token=${w.trello.token}`,
			{
				method: "POST",
				headers: { "content-type": "application/json" },
				body: JSON.stringify({
					callbackURL: callbackUrl,
					idModel: board().id,
					description: "Lisa",
				}),
			},
		);
		expect(res.status).toBe(200);
		expect(w.trello.store.webhooks.map((h) => h.callbackURL)).toEqual([callbackUrl]);
	});
});

describe("Trello end to end", () => {
	it("resolves a card labelled in Todo: In Review, PR attached, label removed; Lisa's own actions start nothing", async () => {
		const card = w.trello.store.addCard(board().id, "Todo", {
			name: "Fix login redirect",
			desc: "Users land on /home.",
		});
		const human = w.trello.human();
		const added = human.addLabel(card, "lisa");
		const delivery = await deliveryOf(added?.id);
		expect(delivery.status).toBe(202);
		const { runId } = delivery.response as { runId: string };

		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.issueKey).toBe(card.shortLink);
		const pr = w.github.pulls("acme/api").find((p) => p.head.ref.includes("fix-login-redirect"));
		expect(pr?.head.ref).toBe(`feat/${card.shortLink.toLowerCase()}-fix-login-redirect`);
		expect(pr?.body).toContain(`Resolves ${w.trello.store.cardUrl(card)}`);

		expect(w.trello.store.listName(card)).toBe("In Review");
		expect(w.trello.store.labelNames(card)).not.toContain("lisa");
		expect(card.attachments.map((a) => a.url)).toEqual([pr?.html_url]);
		const comments = w.trello.store.actions.filter(
			(a) => a.type === "commentCard" && (a.data.card as { id: string }).id === card.id,
		);
		expect(comments.map((c) => c.idMemberCreator)).toEqual([w.trello.me.id, w.trello.me.id]);
		expect(String(comments[0]?.data.text)).toMatch(/^Lisa is working on this issue/);
		expect(String(comments[1]?.data.text)).toContain(pr?.html_url);

		// Every action Lisa took was delivered back to Lisa and ignored: no second run.
		await w.trello.settle();
		const own = w.trello.deliveries.filter(
			(d) =>
				w.trello.store.actions.find((a) => a.id === d.actionId)?.idMemberCreator === w.trello.me.id,
		);
		expect(own.map((d) => d.actionType).sort()).toEqual(
			[
				"addAttachmentToCard",
				"commentCard",
				"commentCard",
				"removeLabelFromCard",
				"updateCard",
				"updateCard",
			].sort(),
		);
		expect(own.every((d) => d.status === 200)).toBe(true);
		expect(own.filter((d) => d.actionType === "updateCard").map((d) => d.response)).toEqual(
			expect.arrayContaining([
				{ ignored: 'moved to "In Progress", not "Todo"' },
				{ ignored: 'moved to "In Review", not "Todo"' },
			]),
		);
		expect(own.filter((d) => d.actionType === "commentCard").map((d) => d.response)).toEqual([
			{ ignored: "Lisa's own comment (it carries Lisa's marker)" },
			{ ignored: "Lisa's own comment (it carries Lisa's marker)" },
		]);
		expect((await runsOf(card)).map((r) => r.runId)).toEqual([runId]);
	});

	it("returns a failed card to Todo; Lisa's own move back into Todo does not start a second run", async () => {
		const card = w.trello.store.addCard(board().id, "In Review", {
			name: "Break things",
			desc: "lisa-fake: stderr=fatal: the build is on fire\nlisa-fake: exit=3",
			labels: ["lisa"],
		});
		const moved = w.trello.human().moveCard(card, "Todo");
		const delivery = await deliveryOf(moved?.id);
		expect(delivery.status).toBe(202);
		const { runId } = delivery.response as { runId: string };
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("failed");
		expect(run.error).toMatch(/claude exited with code 3/);
		expect(w.trello.store.listName(card)).toBe("Todo");
		expect(w.trello.store.labelNames(card)).toContain("lisa");
		const last = w.trello.store.actions.filter((a) => a.type === "commentCard").at(-1);
		expect(String(last?.data.text)).toMatch(
			/could not resolve this issue: claude exited with code 3/,
		);
		expect(String(last?.data.text)).toContain('back in "Todo"');

		// Lisa moved the labelled card into Todo: a person doing that starts a run; Lisa doing it does not.
		await w.trello.settle();
		const backToTodo = w.trello.store.actions.find(
			(a) =>
				a.type === "updateCard" &&
				a.idMemberCreator === w.trello.me.id &&
				(a.data.card as { id: string }).id === card.id &&
				(a.data.listAfter as { name: string }).name === "Todo",
		);
		expect((await deliveryOf(backToTodo?.id)).response).toEqual({
			ignored: "the event was caused by Lisa itself",
		});
		expect((await runsOf(card)).map((r) => r.runId)).toEqual([runId]);
	});
});

describe("Trello deliveries", () => {
	const send = (body: string, signature = signTrello(body, callbackUrl, w.trello.appSecret)) =>
		w.post("/webhooks/trello", body, {
			"content-type": "application/json",
			"x-trello-webhook": signature,
		});

	it("ignores irrelevant actions with the reason", async () => {
		const human = w.trello.human();
		const unlabelled = w.trello.store.addCard(board().id, "In Review", { name: "Not for Lisa" });
		const other = w.trello.store.addCard(board().id, "Todo", {
			name: "Has a bug",
			labels: ["lisa"],
		});
		const answers = [
			human.moveCard(unlabelled, "In Progress"),
			human.addLabel(other, "bug"),
			human.moveCard(other, "Merged"),
			human.comment(other, "what about this?"),
		];
		const responses = [];
		for (const a of answers) responses.push((await deliveryOf(a?.id)).response);
		expect(responses).toEqual([
			{ ignored: 'moved to "In Progress", not "Todo"' },
			{ ignored: 'label "bug" is not "lisa" or "lisa-epic"' },
			{ ignored: 'moved to "Merged", not "Todo"' },
			{ ignored: 'commentCard is neither label "lisa" added nor a move into "Todo"' },
		]);
		expect(await runsOf(unlabelled)).toEqual([]);
		expect(await runsOf(other)).toEqual([]);
	});

	it("starts a run for a card moved into pick_from, label or not", async () => {
		const card = w.trello.store.addCard(board().id, "In Review", { name: "Moved without a label" });
		const moved = w.trello.human().moveCard(card, "Todo");
		const delivery = await deliveryOf(moved?.id);
		expect(delivery.status).toBe(202);
		const run = await w.waitForRun((delivery.response as { runId: string }).runId);
		expect(run.status).toBe("succeeded");
		expect(w.trello.store.listName(card)).toBe("In Review");
	});

	it("rejects bad signatures (including one made for the Host-header URL) and fails closed without a secret", async () => {
		const card = w.trello.store.addCard(board().id, "Todo", { name: "Never run" });
		// Forged deliveries of a label being added (not made in the double, so never delivered by it).
		const eve = w.trello.store.addMember("Eve");
		const body = w.trello.webhookBody({
			id: trelloId(),
			idMemberCreator: eve.id,
			type: "addLabelToCard",
			date: new Date().toISOString(),
			data: {
				card: { id: card.id, name: card.name, shortLink: card.shortLink },
				board: { id: board().id, name: board().name },
				label: { name: "lisa" },
			},
			memberCreator: eve,
		});
		const wrongSecret = signTrello(body, callbackUrl, "not-the-secret");
		// What a receiver that trusted the Host header would check against.
		const hostUrl = `http://localhost:${new URL(callbackUrl).port}/webhooks/trello`;
		const forHost = signTrello(body, hostUrl, w.trello.appSecret);
		const closed = w.appWith({ trello: { appSecret: undefined } });
		const noSecret = await closed.request("/webhooks/trello", {
			method: "POST",
			body,
			headers: { "x-trello-webhook": signTrello(body, callbackUrl, w.trello.appSecret) },
		});
		const statuses = [
			(await send(body, wrongSecret)).status,
			(await send(body, forHost)).status,
			(await w.post("/webhooks/trello", body, { "content-type": "application/json" })).status,
			noSecret.status,
			(await send("{not json")).status,
		];
		expect(statuses).toEqual([401, 401, 401, 401, 400]);
		expect(await runsOf(card)).toEqual([]);
	});

	it("deduplicates a redelivered action on its signed body", async () => {
		const card = w.trello.store.addCard(board().id, "Todo", {
			name: "Only once",
			desc: "lisa-fake: sleep=1",
		});
		const action = w.trello.human().addLabel(card, "lisa");
		const first = await deliveryOf(action?.id);
		expect(first.status).toBe(202);
		if (!action) throw new Error("no action");
		const again = await send(w.trello.webhookBody(action, w.trello.store.webhooks[0]));
		expect(again.status).toBe(200);
		expect(await again.json()).toEqual({ duplicate: true });
		await w.waitForRun((first.response as { runId: string }).runId);
		expect(await runsOf(card)).toHaveLength(1);
	});
});

describe("progress comments", () => {
	it("can be turned off: no start or result comment, but a failure is still reported", async () => {
		const file = w.configFile;
		const original = await readFile(file, "utf8");
		await writeFile(file, `${original}\ncomments: {enabled: false}\n`);
		try {
			const quiet = w.trello.store.addCard(board().id, "Todo", { name: "Quiet success" });
			const loud = w.trello.store.addCard(board().id, "Todo", {
				name: "Loud failure",
				desc: "lisa-fake: exit=2",
			});
			const human = w.trello.human();
			const ids = [];
			for (const card of [quiet, loud]) {
				const d = await deliveryOf(human.addLabel(card, "lisa")?.id);
				ids.push((d.response as { runId: string }).runId);
			}
			const [ok, failed] = await Promise.all(ids.map((id) => w.waitForRun(id)));
			expect([ok?.status, failed?.status]).toEqual(["succeeded", "failed"]);
			const commentsOn = (card: TrelloCard) =>
				w.trello.store.actions
					.filter((a) => a.type === "commentCard" && (a.data.card as { id: string }).id === card.id)
					.map((a) => String(a.data.text));
			expect(commentsOn(quiet)).toEqual([]);
			expect(commentsOn(loud)).toEqual([
				expect.stringMatching(/^Lisa could not resolve this issue/),
			]);
			expect(w.trello.store.listName(quiet)).toBe("In Review");
		} finally {
			await writeFile(file, original);
		}
	});
});
