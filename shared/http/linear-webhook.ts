import { LINEAR_WEBHOOK_SIGNATURE_HEADER, LinearWebhookClient } from "@linear/sdk/webhooks";
import type { Context } from "hono";
import { type LinearIssueEvent, linearIssueVerdict } from "../domain/linear-trigger";
import { acceptDelivery, ignored } from "./accept";
import type { ApiDeps } from "./deps";

/**
 * `POST /webhooks/linear`: signature over the raw body and the signed timestamp (±60 s) checked by
 * @linear/sdk's webhook client; fails closed without a secret; dedupes on `Linear-Delivery`.
 */
export async function linearWebhook(c: Context, deps: ApiDeps): Promise<Response> {
	const raw = Buffer.from(await c.req.arrayBuffer());
	let payload: LinearIssueEvent;
	try {
		payload = JSON.parse(raw.toString("utf8"));
	} catch {
		return c.json({ error: "body is not valid JSON" }, 400);
	}
	const secret = deps.settings.linear.webhookSecret;
	if (!secret)
		return c.json({ error: "LINEAR_WEBHOOK_SECRET is not set: Linear webhooks are refused" }, 401);
	const signature = c.req.header(LINEAR_WEBHOOK_SIGNATURE_HEADER);
	if (!signature) return c.json({ error: "missing Linear-Signature header" }, 401);
	try {
		new LinearWebhookClient(secret).verify(raw, signature);
	} catch (err) {
		return c.json({ error: (err as Error).message }, 401);
	}

	const state = deps.config();
	if (state.status !== "ok")
		return c.json(
			{ error: `Lisa is not configured (${state.status} ${state.file}); retry later` },
			503,
		);
	const { config } = state;
	if (config.source !== "linear") return ignored(c, `the configured source is ${config.source}`);

	const verdict = linearIssueVerdict(payload, {
		label: config.source_config.label,
		pickFrom: config.source_config.pick_from,
		team: config.source_config.team,
	});
	if (!verdict.trigger) return ignored(c, verdict.reason);

	// Lisa's own status moves (e.g. back to pick_from) must never start a run: no loops.
	if (verdict.actorId) {
		let self: string | undefined;
		try {
			self = await deps.tracker("linear").selfActorId();
		} catch (err) {
			deps.log.error({ err }, "cannot tell Lisa's own Linear actor");
			return c.json({ error: "cannot verify the event's actor right now; retry later" }, 503);
		}
		if (self && verdict.actorId === self) return ignored(c, "the event was caused by Lisa itself");
	}

	const deliveryId = c.req.header("linear-delivery");
	if (!deliveryId) return c.json({ error: "missing Linear-Delivery header" }, 400);
	return acceptDelivery(c, deps, {
		source: "linear",
		deliveryId,
		issueId: verdict.issueId,
		issueKey: verdict.issueKey,
	});
}
