import { LINEAR_WEBHOOK_SIGNATURE_HEADER, LinearWebhookClient } from "@linear/sdk/webhooks";
import type { Context } from "hono";
import {
	acceptDelivery,
	configOr503,
	type Delivery,
	deliveryKey,
	forwardDelivery,
	ignored,
	ownActorAnswer,
	unusableIds,
} from "../../api/accept";
import { verifiedJson } from "../../api/body";
import type { ApiDeps } from "../../api/deps";
import { isTerminalRun } from "../../domain/states";
import { cancelRequested, MAX_SESSION_PROMPT, sessionPrompted } from "../../queue/messages";
import { type AgentSessionEvent, agentSessionVerdict } from "./session";
import { type LinearIssueEvent, linearIssueVerdict } from "./trigger";

/** Issue (label trigger), AgentSessionEvent (delegation), Comment (recognised as Lisa's own). */
const HANDLED = ["Issue", "AgentSessionEvent", "Comment"];

/** One verifier per secret, made once rather than per request. */
let verifier: { secret: string; client: LinearWebhookClient } | undefined;
function verifierFor(secret: string): LinearWebhookClient {
	if (verifier?.secret !== secret) verifier = { secret, client: new LinearWebhookClient(secret) };
	return verifier.client;
}

/**
 * `POST /webhooks/linear`: signature over the raw bytes and the signed timestamp (±60 s) checked
 * by @linear/sdk's webhook client; fails closed without a secret; dedupes on the SHA-256 of the
 * signed body (`Linear-Delivery` is recorded on the run, never trusted: Linear does not sign it).
 * Handles Issue events (the label trigger) and AgentSessionEvent (the issue delegated to Lisa).
 */
export async function linearWebhook(c: Context, deps: ApiDeps): Promise<Response> {
	const raw = Buffer.from(await c.req.arrayBuffer());
	const secret = deps.settings.linear.webhookSecret;
	if (!secret)
		return c.json({ error: "LINEAR_WEBHOOK_SECRET is not set: Linear webhooks are refused" }, 401);
	const signature = c.req.header(LINEAR_WEBHOOK_SIGNATURE_HEADER);
	if (!signature) return c.json({ error: "missing Linear-Signature header" }, 401);
	try {
		verifierFor(secret).verify(raw, signature);
	} catch (err) {
		// The client reads the signed timestamp after the signature matched: a JSON error means the
		// body is authentic but malformed.
		if (err instanceof SyntaxError) return c.json({ error: "body is not valid JSON" }, 400);
		return c.json({ error: (err as Error).message }, 401);
	}
	const body = verifiedJson<LinearIssueEvent & AgentSessionEvent>(c, raw);
	if (!body.payload) return body.answer;
	const payload = body.payload;
	// Answered without the config, so a tracker is never told to retry an event Lisa never wants.
	if (!HANDLED.includes(payload?.type ?? ""))
		return ignored(c, `${payload?.type ?? "unknown"} events are not handled`);

	const { config, answer } = configOr503(c, deps);
	if (!config) return answer;
	if (config.source !== "linear") return ignored(c, `the configured source is ${config.source}`);
	const delivery: Delivery = {
		source: "linear",
		key: deliveryKey(raw),
		id: c.req.header("linear-delivery"),
	};

	if (payload.type === "AgentSessionEvent") return agentSessionEvent(c, deps, payload, delivery);

	const verdict = linearIssueVerdict(payload, {
		label: config.source_config.label,
		pickFrom: config.source_config.pick_from,
		team: config.source_config.team,
		epic: config.epic,
	});
	if (!verdict.trigger) return ignored(c, verdict.reason);
	// Lisa's own status moves (e.g. back to pick_from) must never start a run.
	const own = await ownActorAnswer(c, deps, "linear", verdict.actorId);
	if (own) return own;

	return acceptDelivery(c, deps, delivery, {
		issueId: verdict.issueId,
		issueKey: verdict.issueKey,
		...(verdict.kind ? { kind: verdict.kind } : {}),
	});
}

/** created → start a run in the session; prompted → record it on the run, or stop the run. */
async function agentSessionEvent(
	c: Context,
	deps: ApiDeps,
	payload: AgentSessionEvent,
	delivery: Delivery,
): Promise<Response> {
	const verdict = agentSessionVerdict(payload);
	if (verdict.kind === "ignore") return ignored(c, verdict.reason);
	if (verdict.kind === "start")
		return acceptDelivery(c, deps, delivery, {
			issueId: verdict.issueId,
			issueKey: verdict.issueKey,
			agentSessionId: verdict.sessionId,
			request: verdict.request,
		});

	const bad = unusableIds(c, {
		issueId: verdict.issueId,
		agentSessionId: verdict.sessionId,
		...(verdict.kind === "prompt" && verdict.authorId ? { userId: verdict.authorId } : {}),
	});
	if (bad) return bad;
	const run = (await deps.store.runsOfIssue("linear", verdict.issueId)).find(
		(r) => r.agentSessionId === verdict.sessionId,
	);
	if (!run) return ignored(c, `no run belongs to agent session ${verdict.sessionId}`);
	const requestedAt = deps.now().toISOString();
	if (verdict.kind === "stop") {
		if (isTerminalRun(run.status)) return ignored(c, `run ${run.runId} already ${run.status}`);
		return forwardDelivery(
			c,
			deps,
			delivery,
			cancelRequested({
				runId: run.runId,
				reason: `stopped in Linear${verdict.by ? ` by ${verdict.by}` : ""}`,
				requestedAt,
			}),
		);
	}
	return forwardDelivery(
		c,
		deps,
		delivery,
		sessionPrompted({
			runId: run.runId,
			activityId: verdict.activityId,
			// A follow-up longer than the run keeps is cut here, never refused (Linear would retry it).
			body: verdict.body.slice(0, MAX_SESSION_PROMPT),
			author: verdict.author?.slice(0, 256),
			...(verdict.authorId ? { authorId: verdict.authorId } : {}),
			...(verdict.writtenAt ? { writtenAt: verdict.writtenAt } : {}),
			requestedAt,
		}),
	);
}
