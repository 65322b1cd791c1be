import { createHash, createHmac, randomUUID } from "node:crypto";
import { GetQueueAttributesCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { sweep } from "../../src/pipeline/sweeper";
import { awsClients } from "../../src/runtime/aws";
import type { DynamoStore } from "../../src/store/dynamo";
import type { GitHubIssue } from "../doubles/github/server";
import { githubHeaders, issuesEvent } from "../doubles/github/webhook";
import type { DoubleIssue } from "../doubles/linear/server";
import { agentSessionWebhook, issueWebhook, linearHeaders } from "../doubles/linear/webhook";
import { signTrello, type TrelloAction, type TrelloCard } from "../doubles/trello/server";
import { type PipelineWorld, pipelineWorld } from "../support/pipeline";
import { createStackWorld, type StackWorld } from "../support/stack";
import { type ApiRun, GITHUB_WEBHOOK_SECRET, TRELLO_BOARD, WEBHOOK_SECRET } from "../support/world";

// The outside review's attacks, replayed against the real HTTP app, dynalite, fauxqs and the
// tracker doubles (items 10-13 of the review): replays of signed webhooks, signatures over decoded
// text, bad ids and cursors, poison messages and oversized bodies.

const REPO = "acme/api";
/**
 * The key a delivery is remembered by: SHA-256 of the bytes its signature covers
 * (docs/http-api.md › Deliveries and replays).
 */
const deliveryKey = (signed: Buffer) => createHash("sha256").update(signed).digest("hex");
let linear: StackWorld;
let trello: StackWorld;
let github: StackWorld;
let pipe: PipelineWorld;

beforeAll(async () => {
	[linear, trello, github, pipe] = await Promise.all([
		createStackWorld({ configExtra: "limits: {max_attempts: 1}" }),
		createStackWorld({ source: "trello", configExtra: "limits: {max_attempts: 1}" }),
		createStackWorld({ source: "github", configExtra: "limits: {max_attempts: 1}" }),
		pipelineWorld(),
	]);
}, 120_000);
afterAll(async () => {
	await Promise.all([linear?.stop(), trello?.stop(), github?.stop(), pipe?.stop()]);
});

const storeOf = (w: StackWorld): DynamoStore => {
	if (!w.stack) throw new Error("no stack");
	return w.stack.deps.store;
};

/** The run a replay started, once it ended and finalize is done. */
async function ended(w: StackWorld, res: Response): Promise<ApiRun> {
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	return w.waitForRun(runId);
}

/** A replay's run: cancelled at intake with `reason`, never launched, leaving the tracker alone. */
function expectUntouched(run: ApiRun, reason: RegExp) {
	expect(run.status).toBe("cancelled");
	expect(run.error).toMatch(reason);
	expect(run.steps).toEqual([]);
	expect(run.tracker.untouched).toBe(true);
}

// ── item 10: replays ─────────────────────────────────────────────────────────────────────────

/** Everything a Linear run can do to its issue, to compare before and after a replay. */
async function linearEffects(issue: DoubleIssue) {
	const l = linear.linear;
	return {
		state: l.stateName(issue),
		labels: l.labelNames(issue),
		comments: l.state.comments.filter((c) => c.issueId === issue.id).length,
		updates: l.state.issueUpdates.filter((u) => u.issueId === issue.id).length,
		activities: l.state.agentActivities.filter((a) => a.userId === l.state.viewer.id).length,
		pulls: linear.github.pulls(REPO).length,
		agents: (await linear.agents.calls()).length,
	};
}

/** The same Linear event delivered again later: its payload, signed again with a fresh timestamp. */
const resigned = (body: string) =>
	JSON.stringify({ ...JSON.parse(body), webhookTimestamp: Date.now(), webhookId: randomUUID() });

describe("item 10: a signed Linear webhook replayed", () => {
	it("with a fresh Linear-Delivery after its run finished is a duplicate; once its record is gone, the intake cancels it and leaves the issue alone", async () => {
		const issue = linear.issue("Replayed after the run");
		const body = linear.createdWebhook(issue);
		const first = await linear.sendWebhook(body, linearHeaders(body, WEBHOOK_SECRET));
		expect(first.status).toBe(202);
		const { runId } = (await first.json()) as { runId: string };
		const run = await linear.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		const after = await linearEffects(issue);
		expect(after).toMatchObject({ state: "In Review", labels: [] });

		// Within the signed timestamp's 60 s: the same bytes under another delivery id.
		const replay = await linear.sendWebhook(
			body,
			linearHeaders(body, WEBHOOK_SECRET, randomUUID()),
		);
		expect(replay.status).toBe(200);
		expect(await replay.json()).toEqual({ duplicate: true });

		// The record is gone (expired, or lost): the same bytes are accepted, and the intake sees
		// an issue that no longer waits for Lisa.
		await storeOf(linear).releaseDelivery("linear", deliveryKey(Buffer.from(body)), runId);
		const again = await ended(
			linear,
			await linear.sendWebhook(body, linearHeaders(body, WEBHOOK_SECRET, randomUUID())),
		);
		expectUntouched(
			again,
			new RegExp(`^issue ${issue.identifier} no longer waits for Lisa: it does not carry`),
		);
		expect(await linearEffects(issue)).toEqual(after);
		const runs = await storeOf(linear).runsOfIssue("linear", issue.id);
		expect(runs.map((r) => r.runId).sort()).toEqual([runId, again.id].sort());
	});

	it("signed again later (the tracker's retry of a finished run's event) starts nothing either", async () => {
		const issue = linear.issue("Retried by the tracker");
		const body = JSON.stringify(
			issueWebhook({
				action: "update",
				issue,
				double: linear.linear,
				updatedFrom: { labelIds: [] },
			}),
		);
		const { runId } = (await (await linear.sendWebhook(body)).json()) as { runId: string };
		expect((await linear.waitForRun(runId)).status).toBe("succeeded");
		const after = await linearEffects(issue);
		const late = await ended(linear, await linear.sendWebhook(resigned(body)));
		expectUntouched(late, /no longer waits for Lisa/);
		expect(await linearEffects(issue)).toEqual(after);
	});

	it("from an agent session: the tracker's retry while the run works, and a replay after the session completed, leave the session alone", async () => {
		const issue = linear.issue("Delegated once", "lisa-fake: sleep=3", []);
		const payload = agentSessionWebhook({ action: "created", double: linear.linear, issue });
		const body = JSON.stringify(payload);
		const first = await linear.sendWebhook(body);
		expect(first.status).toBe(202);
		const { runId } = (await first.json()) as { runId: string };
		await linear.waitForRun(runId, (r) => r.steps[0]?.status === "running");
		const session = linear.linear.state.agentSessions.find((s) => s.id === payload.agentSession.id);
		const mine = () =>
			linear.linear.state.agentActivities
				.filter(
					(a) => a.agentSessionId === session?.id && a.userId === linear.linear.state.viewer.id,
				)
				.map((a) => a.content.type);

		// Linear's retry of the delegation (a new delivery of the same event) while the run works.
		const during = await ended(linear, await linear.sendWebhook(resigned(body)));
		expectUntouched(during, new RegExp(`already has an active run \\(${runId}\\)`));
		expect((await linear.waitForRun(runId)).status).toBe("succeeded");
		expect(mine()).toEqual(["thought", "action", "response"]);
		expect(session?.status).toBe("complete");

		const after = await linearEffects(issue);
		const late = await ended(linear, await linear.sendWebhook(resigned(body)));
		expectUntouched(late, /no longer waits for Lisa: its agent session is complete$/);
		expect(mine()).toEqual(["thought", "action", "response"]);
		expect(await linearEffects(issue)).toEqual(after);
	});

	it("costs one store write when accepted; a duplicate's put is refused and it reads the claim", async () => {
		const app = createApp(pipe.deps);
		const issue = pipe.issue("Counted writes");
		const body = JSON.stringify(issueWebhook({ action: "create", issue, double: pipe.linear }));
		const secret = pipe.settings.linear.webhookSecret ?? "";
		const post = () =>
			app.request("/webhooks/linear", {
				method: "POST",
				body,
				headers: linearHeaders(body, secret, randomUUID()),
			});
		const seen: string[] = [];
		const stop = pipe.store.observe((command) => seen.push(command));
		try {
			expect((await post()).status).toBe(202);
			const accepted = [...seen];
			seen.length = 0;
			expect((await post()).status).toBe(200);
			// The claim: the only request of an accepted webhook (its message is on the queue).
			expect(accepted).toEqual(["PutItemCommand"]);
			// A duplicate: the claim's put is refused (nothing stored), then the claim is read.
			expect(seen).toEqual(["PutItemCommand", "GetItemCommand"]);
		} finally {
			stop();
			await pipe.settle();
		}
	});
});

describe("item 10: a signed Trello action replayed", () => {
	const board = () => {
		const b = trello.trello.store.boards.find((x) => x.name === TRELLO_BOARD);
		if (!b) throw new Error("no board");
		return b;
	};
	/** Trello signs with the callback URL Lisa rebuilds from its public URL. */
	const callbackUrl = () => `${trello.stack?.settings.publicUrl}/webhooks/trello`;
	const post = (
		body: string,
		signature = signTrello(body, callbackUrl(), trello.trello.appSecret),
	) =>
		fetch(`${trello.url()}/webhooks/trello`, {
			method: "POST",
			body,
			headers: { "content-type": "application/json", "x-trello-webhook": signature },
		});
	const mineOn = (card: TrelloCard) =>
		trello.trello.store.actions.filter(
			(a) =>
				a.idMemberCreator === trello.trello.me.id &&
				(a.data.card as { id?: string } | undefined)?.id === card.id,
		).length;

	it("is a duplicate while its record lives, cancelled at intake once it is gone, and refused when older than the record lives", async () => {
		const card = trello.trello.store.addCard(board().id, "Todo", { name: "Fix – the dash" });
		const action = trello.trello.human().addLabel(card, "lisa") as TrelloAction;
		const body = trello.trello.webhookBody(action);
		const first = await post(body);
		expect(first.status).toBe(202);
		const { runId } = (await first.json()) as { runId: string };
		expect((await trello.waitForRun(runId)).status).toBe("succeeded");
		expect(trello.trello.store.listName(card)).toBe("In Review");
		const after = { actions: mineOn(card), attachments: card.attachments.length };

		expect(await (await post(body)).json()).toEqual({ duplicate: true });
		// Trello signs each character's low byte: a copy with "–" (U+2013) swapped for "ē" (U+0113)
		// carries the same signature, and is the same delivery.
		const swapped = body.replace("–", "ē");
		expect(swapped).not.toBe(body);
		const sameSignature = signTrello(body, callbackUrl(), trello.trello.appSecret);
		expect(await (await post(swapped, sameSignature)).json()).toEqual({ duplicate: true });

		await storeOf(trello).releaseDelivery(
			"trello",
			deliveryKey(Buffer.from(body, "latin1")),
			runId,
		);
		const again = await ended(trello, await post(body));
		expectUntouched(
			again,
			/no longer waits for Lisa: it does not carry the label "lisa" or "lisa-epic" and is not in "Todo"$/,
		);
		expect({ actions: mineOn(card), attachments: card.attachments.length }).toEqual(after);

		// Trello signs no time: an action older than the record's lifetime is refused outright.
		const old = trello.trello.webhookBody({
			...action,
			id: `${action.id.slice(0, -4)}beef`,
			date: new Date(Date.now() - 4 * 86_400_000).toISOString(),
		});
		const refused = await post(old);
		expect(refused.status).toBe(200);
		expect(await refused.json()).toEqual({
			ignored: expect.stringMatching(/older than 3 days/),
		});
	});
});

describe("item 10: a signed GitHub event replayed", () => {
	const send = (body: string, delivery = randomUUID()) =>
		github.post(
			"/webhooks/github",
			body,
			githubHeaders(body, GITHUB_WEBHOOK_SECRET, "issues", delivery),
		);
	const labelled = (issue: GitHubIssue) =>
		JSON.stringify(issuesEvent(github.github, REPO, issue, { label: "lisa", sender: "ada" }));
	const issueNow = (n: number) =>
		github.github.issues(REPO).find((i) => i.number === n) as GitHubIssue;
	const effects = (n: number) => ({
		labels: issueNow(n).labels.map((l) => l.name),
		state: issueNow(n).state,
		comments: github.github.comments(REPO, n).length,
		pulls: github.github.pulls(REPO).length,
	});

	it("with a fresh X-GitHub-Delivery is a duplicate; once its record is gone, the intake cancels it", async () => {
		const issue = github.github.addIssue(REPO, {
			title: "Replayed issue",
			labels: ["lisa"],
			user: "ada",
		});
		const body = labelled(issue);
		const first = await send(body);
		expect(first.status).toBe(202);
		const { runId } = (await first.json()) as { runId: string };
		expect((await github.waitForRun(runId)).status).toBe("succeeded");
		const after = effects(issue.number);
		expect(after.labels).toEqual(["in review"]);

		expect(await (await send(body)).json()).toEqual({ duplicate: true });
		await storeOf(github).releaseDelivery("github", deliveryKey(Buffer.from(body)), runId);
		const again = await ended(github, await send(body));
		expectUntouched(
			again,
			/no longer waits for Lisa: it does not carry the label "lisa" or "lisa-epic"$/,
		);
		expect(effects(issue.number)).toEqual(after);
	});

	it("for an issue closed since, still labelled, is cancelled at intake; one older than 3 days is refused", async () => {
		const issue = github.github.addIssue(REPO, {
			title: "Closed since",
			labels: ["lisa"],
			user: "ada",
		});
		const body = labelled(issue);
		const closed = await fetch(`${github.github.url}/repos/${REPO}/issues/${issue.number}`, {
			method: "PATCH",
			headers: {
				authorization: `token ${github.github.token}`,
				"content-type": "application/json",
			},
			body: JSON.stringify({ state: "closed" }),
		});
		expect(closed.status).toBe(200);
		const before = effects(issue.number);
		const run = await ended(github, await send(body));
		expectUntouched(run, /no longer waits for Lisa: it is closed \("closed"\)$/);
		expect(effects(issue.number)).toEqual(before);

		const payload = JSON.parse(body);
		payload.issue.updated_at = new Date(Date.now() - 4 * 86_400_000).toISOString();
		const old = await send(JSON.stringify(payload));
		expect(old.status).toBe(200);
		expect(await old.json()).toEqual({ ignored: expect.stringMatching(/older than 3 days/) });
	});
});

// ── item 11: signatures over the raw bytes ───────────────────────────────────────────────────

/** `text` with its "@@" turned into a byte that is not UTF-8, and the text a lenient decoder reads. */
function notUtf8(text: string): { raw: Buffer; decoded: string } {
	const [head, tail] = text.split("@@") as [string, string];
	const raw = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
	return { raw, decoded: raw.toString("utf8") };
}

describe("item 11: a body that is not UTF-8", () => {
	it("Linear: 401 when signed over its U+FFFD text, 400 when signed over its bytes", async () => {
		const issue = linear.issue("Bad byte @@ here");
		const { raw, decoded } = notUtf8(linear.createdWebhook(issue));
		expect(decoded).toContain("\uFFFD");
		const hmac = (b: Buffer) => createHmac("sha256", WEBHOOK_SECRET).update(b).digest("hex");
		const post = (signature: string) =>
			fetch(`${linear.url()}/webhooks/linear`, {
				method: "POST",
				body: raw,
				headers: { ...linearHeaders(decoded, WEBHOOK_SECRET), "linear-signature": signature },
			});
		expect((await post(hmac(Buffer.from(decoded)))).status).toBe(401);
		const signed = await post(hmac(raw));
		expect(signed.status).toBe(400);
		expect(await signed.json()).toEqual({ error: "body is not valid UTF-8" });
		expect(await storeOf(linear).runsOfIssue("linear", issue.id)).toEqual([]);
	});

	it("GitHub: 401 when signed over its U+FFFD text, 400 when signed over its bytes", async () => {
		const issue = github.github.addIssue(REPO, {
			title: "Bad byte @@ here",
			labels: ["lisa"],
			user: "ada",
		});
		const { raw, decoded } = notUtf8(
			JSON.stringify(issuesEvent(github.github, REPO, issue, { label: "lisa", sender: "ada" })),
		);
		const sign = (b: Buffer) =>
			`sha256=${createHmac("sha256", GITHUB_WEBHOOK_SECRET).update(b).digest("hex")}`;
		const post = (signature: string) =>
			fetch(`${github.url()}/webhooks/github`, {
				method: "POST",
				body: raw,
				headers: {
					...githubHeaders(decoded, GITHUB_WEBHOOK_SECRET, "issues"),
					"x-hub-signature-256": signature,
				},
			});
		expect((await post(sign(Buffer.from(decoded)))).status).toBe(401);
		const signed = await post(sign(raw));
		expect(signed.status).toBe(400);
		expect(await signed.json()).toEqual({ error: "body is not valid UTF-8" });
		expect(await storeOf(github).runsOfIssue("github", `${REPO}#${issue.number}`)).toEqual([]);
	});

	it("Trello: 401 when signed over its U+FFFD text (either form), 400 when signed over its bytes", async () => {
		const board = trello.trello.store.boards.find((x) => x.name === TRELLO_BOARD);
		if (!board) throw new Error("no board");
		const card = trello.trello.store.addCard(board.id, "Todo", { name: "Bad byte @@ here" });
		const action = trello.trello.human().addLabel(card, "lisa") as TrelloAction;
		const { raw, decoded } = notUtf8(trello.trello.webhookBody(action));
		const url = `${trello.stack?.settings.publicUrl}/webhooks/trello`;
		const secret = trello.trello.appSecret;
		const hmac = (b: Buffer) => createHmac("sha1", secret).update(b).digest("base64");
		const post = (signature: string) =>
			fetch(`${trello.url()}/webhooks/trello`, {
				method: "POST",
				body: raw,
				headers: { "content-type": "application/json", "x-trello-webhook": signature },
			});
		// Trello's own binary form, and the UTF-8 form, of the decoded text.
		expect((await post(signTrello(decoded, url, secret))).status).toBe(401);
		expect((await post(hmac(Buffer.from(decoded + url)))).status).toBe(401);
		const signed = await post(hmac(Buffer.concat([raw, Buffer.from(url)])));
		expect(signed.status).toBe(400);
		expect(await signed.json()).toEqual({ error: "body is not valid UTF-8" });
		expect(await storeOf(trello).runsOfIssue("trello", card.id)).toEqual([]);
	});
});

// ── item 12: bad input ───────────────────────────────────────────────────────────────────────

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const cursorOf = (c: string) =>
	JSON.parse(Buffer.from(c, "base64url").toString()) as Record<string, string>;

describe("item 12: bad input to the API", () => {
	it("forged cursors answer 400, for the runs and for a run's events", async () => {
		const runs = await linear.api<{ nextCursor: string | null; runs: { id: string }[] }>(
			"/api/runs?limit=1",
		);
		expect(runs.status).toBe(200);
		const cursor = runs.body.nextCursor ?? "";
		const position = cursorOf(cursor);
		const [a, b] = (await linear.api<{ runs: { id: string }[] }>("/api/runs?limit=2")).body.runs;
		if (!a || !b) throw new Error("two runs expected");
		for (let i = 0; i < 3; i++)
			await storeOf(linear).appendEvent(a.id, { type: "agent.output", message: `n${i}` });
		const events = await linear.api<{ nextCursor: string }>(`/api/runs/${a.id}/events?limit=1`);
		const eventCursor = events.body.nextCursor;

		const forged: [string, string][] = [
			["/api/runs", b64({ pk: "RUN#x", sk: "RUN" })],
			["/api/runs", b64({ hello: "world" })],
			["/api/runs", b64({ ...position, gsi1pk: "ISSUE#linear#x" })],
			["/api/runs", b64({ ...position, gsi3sk: ulid() })],
			["/api/runs?status=succeeded", cursor],
			["/api/runs", eventCursor],
			[`/api/runs/${b.id}/events`, eventCursor],
			[`/api/runs/${a.id}/events`, cursor],
			[`/api/runs/${a.id}/events`, b64({ ...cursorOf(eventCursor), sk: "RUN" })],
			[`/api/runs/${a.id}/events`, b64([1, 2])],
		];
		for (const [path, c] of forged) {
			const res = await linear.api(`${path}${path.includes("?") ? "&" : "?"}cursor=${c}`);
			expect({ path, c, res }).toEqual({
				path,
				c,
				res: { status: 400, body: { error: "invalid cursor" } },
			});
		}
		// The real ones still work.
		expect((await linear.api(`/api/runs?cursor=${cursor}`)).status).toBe(200);
		expect((await linear.api(`/api/runs/${a.id}/events?cursor=${eventCursor}`)).status).toBe(200);
	});

	it("a run id that is not one answers 400 on every route, before any lookup", async () => {
		for (const id of [
			"A".repeat(3000),
			"..%2F..",
			"..%2F..%2Fapi",
			"01JD8X4Z0Q5N8M2R7K3V9W6T1",
			"x",
		])
			for (const [method, suffix] of [
				["GET", ""],
				["GET", "/events"],
				["GET", "/stream"],
				["POST", "/cancel"],
				["POST", "/retry"],
			] as const) {
				const res = await linear.api<{ error: string; issues: string[] }>(
					`/api/runs/${id}${suffix}`,
					{ method },
				);
				expect({ id: id.slice(0, 30), suffix, status: res.status }).toEqual({
					id: id.slice(0, 30),
					suffix,
					status: 400,
				});
				expect(res.body.issues).toEqual([expect.stringMatching(/^id: must be a run id/)]);
			}
	});

	it("a 3000-character issue id answers 400 from POST /api/runs and starts nothing", async () => {
		const res = await linear.api<{ error: string; issues: string[] }>("/api/runs", {
			method: "POST",
			body: JSON.stringify({ issue: "E".repeat(3000) }),
		});
		expect(res.status).toBe(400);
		expect(res.body.issues).toEqual(["issue: must be at most 512 characters"]);
		const spaced = await linear.api("/api/runs", {
			method: "POST",
			body: JSON.stringify({ issue: "ENG 1" }),
		});
		expect(spaced.status).toBe(400);
	});
});

describe("item 12: a message that can never succeed", () => {
	const sqs = () => awsClients(pipe.settings).sqs;
	const putRaw = (body: unknown) =>
		sqs().send(
			new SendMessageCommand({
				QueueUrl: pipe.settings.intakeQueueUrl,
				MessageBody: JSON.stringify(body),
			}),
		);
	const waiting = async () => {
		const out = await sqs().send(
			new GetQueueAttributesCommand({
				QueueUrl: pipe.settings.intakeQueueUrl,
				AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
			}),
		);
		return (
			Number(out.Attributes?.ApproximateNumberOfMessages) +
			Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible)
		);
	};
	const request = (over: Record<string, unknown>) => ({
		type: "run.requested",
		source: "linear",
		issueId: "x",
		trigger: "api",
		requestedAt: pipe.now().toISOString(),
		runId: ulid(pipe.now().getTime()),
		...over,
	});

	it("a 3000-character issue id put on the intake queue is dropped once, not redelivered, and makes no run", async () => {
		const msg = request({ issueId: "I".repeat(3000) });
		await putRaw(msg);
		expect(await pipe.deliver("intake")).toEqual({ handled: 1, failed: 0 });
		expect(await waiting()).toBe(0);
		expect(await pipe.store.getRun(msg.runId as string)).toBeUndefined();
	});

	it("an invalid message that names an existing run is noted on its timeline", async () => {
		const issue = pipe.issue("Noted drop");
		const runId = pipe.deps.newRunId();
		await pipe.request(issue, runId);
		await pipe.settle();
		await putRaw(request({ runId, issueId: "I".repeat(3000) }));
		expect(await pipe.deliver("intake")).toEqual({ handled: 1, failed: 0 });
		expect(await waiting()).toBe(0);
		const dropped = (await pipe.timeline(runId)).filter((e) => e.type === "message.dropped");
		expect(dropped.map((e) => e.message)).toEqual([
			expect.stringMatching(
				/^a message for this run on the intake queue was invalid and dropped: issueId: /,
			),
		]);
	});

	it("a handler error no retry cures fails the run visibly, once; the sweeper does not send it again", async () => {
		const issue = pipe.issue("Refused by the store");
		const runId = pipe.deps.newRunId();
		await pipe.request(issue, runId);
		// DynamoDB refuses the run's first update as malformed: nothing a redelivery can change.
		pipe.failDynamo(
			(r) =>
				r.command === "UpdateItemCommand" &&
				r.json.includes(`RUN#${runId}`) &&
				!r.json.includes("EVT#"),
			Object.assign(new Error("One or more parameter values were invalid"), {
				name: "ValidationException",
			}),
		);
		expect(await pipe.deliver("intake")).toEqual({ handled: 1, failed: 0 });
		expect(await waiting()).toBe(0);
		const run = await pipe.store.getRun(runId);
		expect(run).toMatchObject({
			status: "failed",
			error:
				"run.requested failed for good: ValidationException: One or more parameter values were invalid",
		});
		// Finalized: the issue and the run slot it had taken are free again.
		expect(await pipe.store.issueLockHolder("linear", issue.id)).toBeUndefined();
		expect(await pipe.store.runSlotHolders()).not.toContain(runId);
		pipe.advance(5 * 60_000);
		expect((await sweep(pipe.deps)).redriven).toBe(0);
		expect(await waiting()).toBe(0);
		expect(pipe.launchesOf(runId)).toEqual([]);
	});

	it("an intake that fails every time is sent again a bounded number of times, then its run fails", async () => {
		const issue = pipe.issue("Never readable");
		const runId = pipe.deps.newRunId();
		await pipe.request(issue, runId);
		let sends = 0;
		for (let pass = 0; pass < 20; pass++) {
			// Linear answers 500 every time the intake reads the issue (transient, so retried).
			pipe.gate.failNext(/query LisaIssue/);
			await pipe.deliver("intake", { dropFailed: true });
			pipe.advance(2 * 60_000);
			const report = await sweep(pipe.deps);
			sends += report.redriven;
			if ((await pipe.store.getRun(runId))?.status === "failed") break;
		}
		expect(pipe.unused()).toEqual([]);
		expect(sends).toBe(10);
		expect(await pipe.store.getRun(runId)).toMatchObject({
			status: "failed",
			error: "its intake did not complete: the request was sent again 10 times (see the logs)",
		});
	});
});

// ── item 13: body size ───────────────────────────────────────────────────────────────────────

describe("item 13: an oversized /api body", () => {
	it("answers 413 with a JSON error, whether it says its length or streams it", async () => {
		const token = linear.stack?.apiToken;
		const big = JSON.stringify({ issue: "ENG-1", padding: "x".repeat(5 * 1024 * 1024) });
		const declared = await fetch(`${linear.url()}/api/runs`, {
			method: "POST",
			body: big,
			headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
		});
		expect(declared.status).toBe(413);
		expect(await declared.json()).toEqual({ error: "body larger than 65536 bytes" });

		const chunks = [Buffer.from(big.slice(0, 40_000)), Buffer.from(big.slice(40_000, 100_000))];
		const streamed = await fetch(`${linear.url()}/api/runs`, {
			method: "POST",
			body: new ReadableStream({
				start(c) {
					for (const chunk of chunks) c.enqueue(chunk);
					c.close();
				},
			}),
			duplex: "half",
			headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
		} as RequestInit);
		expect(streamed.status).toBe(413);
		expect(await streamed.json()).toEqual({ error: "body larger than 65536 bytes" });
	});
});
