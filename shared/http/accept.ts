import type { Context } from "hono";
import type { SourceName } from "../config/schema";
import type { ApiDeps } from "./deps";

/** How long a delivery id is remembered: GitHub allows manual redelivery for 3 days. */
const DEDUPE_TTL_SECONDS = 3 * 24 * 3600;
/** A claim left pending this long belongs to a process that died before enqueueing. */
const STALE_CLAIM_MS = 60_000;

export const ignored = (c: Context, reason: string) => c.json({ ignored: reason }, 200);

/**
 * Accepts a verified, relevant delivery: claim its id (a redelivery answers duplicate), enqueue the
 * run request, answer 202. If enqueueing fails the claim is released so the provider's retry wins.
 */
export async function acceptDelivery(
	c: Context,
	deps: ApiDeps,
	req: { source: SourceName; deliveryId: string; issueId: string; issueKey?: string },
): Promise<Response> {
	const runId = deps.newRunId();
	const now = deps.now();
	const claimed = await deps.store.claimDelivery(req.source, req.deliveryId, runId, {
		nowMs: now.getTime(),
		ttlSeconds: DEDUPE_TTL_SECONDS,
		staleMs: STALE_CLAIM_MS,
	});
	if (!claimed) return c.json({ duplicate: true }, 200);
	try {
		await deps.queue.send("intake", {
			type: "run.requested",
			source: req.source,
			issueId: req.issueId,
			issueKey: req.issueKey,
			trigger: "webhook",
			deliveryId: req.deliveryId,
			requestedAt: now.toISOString(),
			runId,
		});
	} catch (err) {
		deps.log.error({ err, deliveryId: req.deliveryId }, "could not enqueue a run request");
		await deps.store.releaseDelivery(req.source, req.deliveryId, runId).catch(() => {});
		return c.json({ error: "could not queue the request; retry later" }, 503);
	}
	await deps.store.markDeliveryQueued(req.source, req.deliveryId).catch((err) => {
		deps.log.warn({ err, deliveryId: req.deliveryId }, "delivery claim left pending");
	});
	return c.json({ runId }, 202);
}
