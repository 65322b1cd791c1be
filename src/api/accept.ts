import { createHash } from "node:crypto";
import type { Context } from "hono";
import type { LisaConfig, SourceName } from "../config/schema";
import { issueRefSchema } from "../domain/ids";
import { NotConfigured } from "../integrations/tracker";
import {
	type EventMessage,
	type MessageOf,
	QUEUES,
	type QueueName,
	type RunRequested,
	runRequested,
} from "../queue/messages";
import type { ApiDeps } from "./deps";

// Webhook deliveries are deduplicated on what their signature covers, never on a header an
// attacker could change: the key is the SHA-256 of the signed bytes (the raw body; for Trello's
// "binary" signature form, the bytes it signs). A replayed body is a duplicate whatever its
// headers say; the intake re-checks that the issue still waits for Lisa
// (docs/how-a-run-works.md › How a run works) for whatever reaches it after its record expired.

/** How long a delivery is remembered: GitHub allows manual redelivery for 3 days. */
const DEDUPE_TTL_SECONDS = 3 * 24 * 3600;
/** A claim this old whose message shows no effect yet was left by a process that died before sending. */
const STALE_CLAIM_MS = 60_000;

/** The dedupe key of a delivery: SHA-256 (hex) of the bytes its signature covers. */
export const deliveryKey = (signed: Uint8Array) =>
	createHash("sha256").update(signed).digest("hex");

/** A verified delivery. */
export interface Delivery {
	source: SourceName;
	/** deliveryKey of the signed bytes. */
	key: string;
	/** The tracker's delivery id (Linear-Delivery, X-GitHub-Delivery, Trello's action id): recorded on the run, never deduplicated on. */
	id?: string;
}

export const ignored = (c: Context, reason: string) => c.json({ ignored: reason }, 200);

/**
 * Ids a verified payload gives that Lisa looks up before it enqueues anything: they must have the
 * shape every queue message holds them to, or the answer is 400 with the reason.
 */
export function unusableIds(
	c: Context,
	ids: Record<string, string | undefined>,
): Response | undefined {
	for (const [name, value] of Object.entries(ids)) {
		const checked = issueRefSchema.safeParse(value);
		if (!checked.success)
			return c.json(
				{
					error: "the payload holds a value Lisa cannot use",
					issues: checked.error.issues.map((i) => `${name}: ${i.message}`),
				},
				400,
			);
	}
	return undefined;
}

/** A payload older than the dedupe record's lifetime could be a replay its record no longer stops. */
export function tooOld(c: Context, at: string | undefined, now: Date): Response | undefined {
	if (at === undefined) return undefined;
	const time = Date.parse(at);
	if (Number.isNaN(time)) return c.json({ error: `the payload's time "${at}" is not a date` }, 400);
	if (now.getTime() - time > DEDUPE_TTL_SECONDS * 1000)
		return ignored(
			c,
			`the event of ${at} is older than ${DEDUPE_TTL_SECONDS / 86_400} days: too old to tell from a replay`,
		);
	return undefined;
}

/** What an accepted delivery sends, and how its answer and its effect are told. */
interface Dispatch<Q extends QueueName> {
	queue: Q;
	/** The run id a new claim is sent with. */
	claimId: string;
	message(runId: string, requestedAt: string): MessageOf<Q>;
	answer(runId: string): Record<string, unknown>;
	/** Whether the message sent with this run id took effect (then a redelivery sends nothing). */
	tookEffect(runId: string): Promise<boolean>;
}

/**
 * One write per accepted delivery: the claim (a conditional put, with the run id the message
 * carries), then the message; only then 202, so an acknowledged delivery is durable. If sending
 * fails the claim is deleted and the answer is 503, so the tracker's retry is accepted. A
 * duplicate costs reads: its claim, and whether the claim's message took effect. A claim older than
 * a minute whose message shows no effect was left by a process that died between the put and the
 * send: the message is sent again with the claim's run id (the handlers are idempotent on it), so
 * a redelivery never makes a second run and is never lost.
 */
async function claimAndSend<Q extends QueueName>(
	c: Context,
	deps: ApiDeps,
	delivery: Delivery,
	dispatch: Dispatch<Q>,
): Promise<Response> {
	const now = deps.now();
	const requestedAt = now.toISOString();
	// What the payload gave must fit the message before anything is recorded.
	const checked = QUEUES[dispatch.queue].safeParse(dispatch.message(dispatch.claimId, requestedAt));
	if (!checked.success)
		return c.json(
			{
				error: "the payload holds a value Lisa cannot use",
				issues: checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
			},
			400,
		);

	const { source, key } = delivery;
	const nowMs = now.getTime();
	for (let tries = 0; tries < 2; tries++) {
		if (
			await deps.store.claimDelivery(source, key, dispatch.claimId, {
				nowMs,
				ttlSeconds: DEDUPE_TTL_SECONDS,
			})
		) {
			try {
				await deps.queue.send(dispatch.queue, dispatch.message(dispatch.claimId, requestedAt));
			} catch (err) {
				deps.log.error({ err, delivery: key }, "could not enqueue a delivery");
				await deps.store.releaseDelivery(source, key, dispatch.claimId).catch(() => {});
				return c.json({ error: "could not queue the request; retry later" }, 503);
			}
			return c.json(dispatch.answer(dispatch.claimId), 202);
		}
		const claim = await deps.store.deliveryClaim(source, key, nowMs);
		// Released (or expired) since the put failed: claim it again.
		if (!claim) continue;
		if (nowMs - claim.claimedAt < STALE_CLAIM_MS || (await dispatch.tookEffect(claim.runId)))
			return c.json({ duplicate: true }, 200);
		try {
			await deps.queue.send(dispatch.queue, dispatch.message(claim.runId, requestedAt));
		} catch (err) {
			deps.log.error({ err, delivery: key }, "could not enqueue a stale delivery again");
			return c.json({ error: "could not queue the request; retry later" }, 503);
		}
		deps.log.warn(
			{ delivery: key, runId: claim.runId },
			"a delivery's earlier claim never took effect: sent again with its run id",
		);
		return c.json(dispatch.answer(claim.runId), 202);
	}
	return c.json({ error: "the delivery is being accepted elsewhere; retry later" }, 503);
}

/** Accepts a verified delivery that starts a run: `run.requested` on the intake queue. */
export function acceptDelivery(
	c: Context,
	deps: ApiDeps,
	delivery: Delivery,
	req: {
		issueId: string;
		issueKey?: string;
		agentSessionId?: string;
		/** What asked for the run besides the issue (a Linear session's mention): untrusted text. */
		request?: RunRequested["request"];
		/** The issue carries the epic label (docs/epics.md › Epics). */
		kind?: RunRequested["kind"];
	},
): Promise<Response> {
	return claimAndSend(c, deps, delivery, {
		queue: "intake",
		claimId: deps.newRunId(),
		message: (runId, requestedAt) =>
			runRequested({
				source: delivery.source,
				issueId: req.issueId,
				issueKey: req.issueKey,
				trigger: "webhook",
				deliveryId: delivery.id,
				requestedAt,
				runId,
				...(req.agentSessionId ? { agentSessionId: req.agentSessionId } : {}),
				...(req.request ? { request: req.request } : {}),
				...(req.kind ? { kind: req.kind } : {}),
			}),
		answer: (runId) => ({ runId }),
		// The intake creates the run first thing: once it exists, the message arrived.
		tookEffect: async (runId) => (await deps.store.getRun(runId)) !== undefined,
	});
}

/** Accepts a verified delivery about an existing run: a message on the events queue. */
export function forwardDelivery(
	c: Context,
	deps: ApiDeps,
	delivery: Delivery,
	message: EventMessage,
): Promise<Response> {
	return claimAndSend(c, deps, delivery, {
		queue: "events",
		claimId: message.runId,
		message: () => message,
		answer: () => ({ queued: true, runId: message.runId }),
		// Nothing on the run tells whether it arrived; the events handlers are idempotent, so a stale
		// claim's message is sent again.
		tookEffect: async () => false,
	});
}

/**
 * Lisa's own actor on the source (undefined when it cannot have acted there: no credentials), or
 * the 503 answer when it cannot be told right now.
 */
export async function selfActorOr503(
	c: Context,
	deps: ApiDeps,
	source: SourceName,
): Promise<string | undefined | Response> {
	try {
		return await deps.selfActorId(source);
	} catch (err) {
		// Without the tracker's credentials Lisa cannot have acted there: accept, and the run
		// reports the missing credentials where the team sees it.
		if (err instanceof NotConfigured) return undefined;
		deps.log.error({ err, source }, "cannot tell Lisa's own actor");
		return c.json({ error: "cannot verify the event's actor right now; retry later" }, 503);
	}
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
	const self = await selfActorOr503(c, deps, source);
	if (self instanceof Response) return self;
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
