import type { Context } from "hono";
import type { LisaConfig, SourceName } from "../config/schema";
import type { EventMessage } from "../queue/messages";
import { NotConfigured } from "../trackers/tracker";
import type { ApiDeps } from "./deps";

/** How long a delivery id is remembered: GitHub allows manual redelivery for 3 days. */
const DEDUPE_TTL_SECONDS = 3 * 24 * 3600;
/** A claim left pending this long belongs to a process that died before enqueueing. */
const STALE_CLAIM_MS = 60_000;

export const ignored = (c: Context, reason: string) => c.json({ ignored: reason }, 200);

/**
 * Claims a delivery id (a redelivery answers duplicate), sends the message, answers 202. If sending
 * fails the claim is released so the provider's retry wins. The message carries the claim's id: a
 * retry that takes over a stale claim re-sends the id the first attempt may already have sent.
 */
async function claimAndSend(
	c: Context,
	deps: ApiDeps,
	req: { source: SourceName; deliveryId: string; claimId: string },
	send: (requestedAt: string, claimId: string) => Promise<void>,
	answer: (claimId: string) => Record<string, unknown>,
): Promise<Response> {
	const now = deps.now();
	const claimId = await deps.store.claimDelivery(req.source, req.deliveryId, req.claimId, {
		nowMs: now.getTime(),
		ttlSeconds: DEDUPE_TTL_SECONDS,
		staleMs: STALE_CLAIM_MS,
	});
	if (!claimId) return c.json({ duplicate: true }, 200);
	try {
		await send(now.toISOString(), claimId);
	} catch (err) {
		deps.log.error({ err, deliveryId: req.deliveryId }, "could not enqueue a delivery");
		await deps.store.releaseDelivery(req.source, req.deliveryId, claimId).catch(() => {});
		return c.json({ error: "could not queue the request; retry later" }, 503);
	}
	await deps.store.markDeliveryQueued(req.source, req.deliveryId).catch((err) => {
		deps.log.warn({ err, deliveryId: req.deliveryId }, "delivery claim left pending");
	});
	return c.json(answer(claimId), 202);
}

/** Accepts a verified delivery that starts a run: `run.requested` on the intake queue. */
export function acceptDelivery(
	c: Context,
	deps: ApiDeps,
	req: {
		source: SourceName;
		deliveryId: string;
		issueId: string;
		issueKey?: string;
		agentSessionId?: string;
	},
): Promise<Response> {
	return claimAndSend(
		c,
		deps,
		{ source: req.source, deliveryId: req.deliveryId, claimId: deps.newRunId() },
		(requestedAt, runId) =>
			deps.queue.send("intake", {
				type: "run.requested",
				source: req.source,
				issueId: req.issueId,
				issueKey: req.issueKey,
				trigger: "webhook",
				deliveryId: req.deliveryId,
				requestedAt,
				runId,
				...(req.agentSessionId ? { agentSessionId: req.agentSessionId } : {}),
			}),
		(runId) => ({ runId }),
	);
}

/** Accepts a verified delivery about an existing run: a message on the events queue. */
export function forwardDelivery(
	c: Context,
	deps: ApiDeps,
	req: { source: SourceName; deliveryId: string; message: EventMessage },
): Promise<Response> {
	return claimAndSend(
		c,
		deps,
		{ source: req.source, deliveryId: req.deliveryId, claimId: req.message.runId },
		() => deps.queue.send("events", req.message),
		() => ({ queued: true, runId: req.message.runId }),
	);
}

/**
 * Events Lisa caused itself (its status moves, labels, comments) must never start a run: no loops.
 * Returns the answer when the actor is Lisa (or cannot be told right now), else undefined.
 */
export async function ownActorAnswer(
	c: Context,
	deps: ApiDeps,
	source: SourceName,
	actorId: string | undefined,
): Promise<Response | undefined> {
	if (!actorId) return undefined;
	let self: string | undefined;
	try {
		self = await deps.tracker(source).selfActorId();
	} catch (err) {
		// Without the tracker's credentials Lisa cannot have acted there: accept, and the run
		// reports the missing credentials where the team sees it.
		if (err instanceof NotConfigured) return undefined;
		deps.log.error({ err, source }, "cannot tell Lisa's own actor");
		return c.json({ error: "cannot verify the event's actor right now; retry later" }, 503);
	}
	if (self && actorId.toLowerCase() === self.toLowerCase())
		return ignored(c, "the event was caused by Lisa itself");
	return undefined;
}

/** The config, or the 503 answer that makes the provider retry once Lisa is configured. */
export function configOr503(
	c: Context,
	deps: ApiDeps,
): { config: LisaConfig; answer?: undefined } | { config?: undefined; answer: Response } {
	const state = deps.config();
	if (state.status === "ok") return { config: state.config };
	return {
		answer: c.json(
			{ error: `Lisa is not configured (${state.status} ${state.file}); retry later` },
			503,
		),
	};
}
