import { createHmac, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import {
	acceptDelivery,
	configOr503,
	deliveryKey,
	ignored,
	ownActorAnswer,
	tooOld,
} from "../../api/accept";
import { decodeUtf8, verifiedJson } from "../../api/body";
import type { ApiDeps } from "../../api/deps";
import { type TrelloWebhook, trelloVerdict } from "./trigger";

/** The callback URL Trello signs with: from LISA_PUBLIC_URL, never from the Host header. */
export const trelloCallbackUrl = (publicUrl: string) => `${publicUrl}/webhooks/trello`;

/**
 * `X-Trello-Webhook` = base64 HMAC-SHA1(app secret, body + callback URL). Trello signs the text as
 * a "binary" string (each character's low byte), which differs from UTF-8 only outside ASCII; both
 * forms are accepted. Returns the body bytes the signature covers (the raw bytes for the UTF-8
 * form; the low bytes of the strictly decoded text for the binary form), or undefined when it does
 * not match. A body that is not UTF-8 has no binary form: it is never decoded leniently, which
 * would let other bytes (each read as U+FFFD) pass with a signature made for a different text.
 */
export function trelloSignedBytes(
	raw: Buffer,
	callbackUrl: string,
	secret: string,
	header: string,
): Buffer | undefined {
	const given = Buffer.from(header);
	const matches = (body: Buffer, encoding: "utf8" | "latin1") => {
		const expected = Buffer.from(
			createHmac("sha1", secret)
				.update(body)
				.update(Buffer.from(callbackUrl, encoding))
				.digest("base64"),
		);
		return expected.length === given.length && timingSafeEqual(expected, given);
	};
	if (matches(raw, "utf8")) return raw;
	const text = decodeUtf8(raw);
	if (text === undefined) return undefined;
	const binary = Buffer.from(text, "latin1");
	return matches(binary, "latin1") ? binary : undefined;
}

/**
 * `HEAD /webhooks/trello` answers 200 (Trello checks the URL before creating a webhook);
 * `POST /webhooks/trello` verifies, dedupes on the SHA-256 of the signed bytes, refuses actions
 * older than the dedupe record lives (Trello signs no timestamp), and starts a run for a trigger
 * action.
 */
export async function trelloWebhook(c: Context, deps: ApiDeps): Promise<Response> {
	const raw = Buffer.from(await c.req.arrayBuffer());
	const secret = deps.settings.trello.appSecret;
	const publicUrl = deps.settings.publicUrl;
	if (!secret || !publicUrl)
		return c.json(
			{
				error: `${secret ? "LISA_PUBLIC_URL" : "TRELLO_APP_SECRET"} is not set: Trello webhooks are refused`,
			},
			401,
		);
	const signature = c.req.header("x-trello-webhook");
	if (!signature) return c.json({ error: "missing X-Trello-Webhook header" }, 401);
	const signed = trelloSignedBytes(raw, trelloCallbackUrl(publicUrl), secret, signature);
	if (!signed) return c.json({ error: "signature does not match" }, 401);

	const body = verifiedJson<TrelloWebhook>(c, raw);
	if (!body.payload) return body.answer;
	const payload = body.payload;
	const actionId = payload.action?.id;
	if (!actionId) return c.json({ error: "payload has no action.id" }, 400);
	const date = payload.action?.date;
	if (!date) return c.json({ error: "payload has no action.date" }, 400);
	const old = tooOld(c, date, deps.now());
	if (old) return old;

	const { config, answer } = configOr503(c, deps);
	if (!config) return answer;
	if (config.source !== "trello") return ignored(c, `the configured source is ${config.source}`);
	const sc = config.source_config;
	const verdict = trelloVerdict(payload, {
		label: sc.label,
		pickFrom: sc.pick_from,
		board: sc.team,
		epic: config.epic,
	});
	if (!verdict.trigger) return ignored(c, verdict.reason);
	// Lisa's own moves back to pick_from must never start a run.
	const own = await ownActorAnswer(c, deps, "trello", verdict.actorId);
	if (own) return own;

	return acceptDelivery(
		c,
		deps,
		{ source: "trello", key: deliveryKey(signed), id: actionId },
		{
			issueId: verdict.cardId,
			issueKey: verdict.cardKey,
			...(verdict.kind ? { kind: verdict.kind } : {}),
		},
	);
}
