import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DeliveryStore } from "../deliveries";
import { type DynamoTable, isConditionFailure } from "./client";
import { key } from "./table";

/** One item per accepted delivery, expiring by TTL (`expiresAt`). */
export function dynamoDeliveries(t: DynamoTable): DeliveryStore {
	return {
		// One conditional put: the only write an accepted webhook makes.
		async claimDelivery(source, dedupeKey, runId, opts) {
			const nowS = Math.floor(opts.nowMs / 1000);
			try {
				await t.doc.send(
					new PutCommand({
						TableName: t.name,
						Item: {
							...key.delivery(source, dedupeKey),
							kind: "delivery",
							runId,
							claimedAt: opts.nowMs,
							expiresAt: nowS + opts.ttlSeconds,
						},
						// TTL deletion is lazy in AWS and absent locally: an expired item counts as absent.
						ConditionExpression: "attribute_not_exists(pk) OR expiresAt < :nowS",
						ExpressionAttributeValues: { ":nowS": nowS },
					}),
				);
				return true;
			} catch (err) {
				if (isConditionFailure(err)) return false;
				throw err;
			}
		},

		async deliveryClaim(source, dedupeKey, nowMs) {
			const out = await t.doc.send(
				new GetCommand({
					TableName: t.name,
					Key: key.delivery(source, dedupeKey),
					ConsistentRead: true,
				}),
			);
			const item = out.Item;
			if (!item || typeof item.runId !== "string" || typeof item.claimedAt !== "number") return;
			if (typeof item.expiresAt === "number" && item.expiresAt < Math.floor(nowMs / 1000)) return;
			return { runId: item.runId, claimedAt: item.claimedAt };
		},

		async releaseDelivery(source, dedupeKey, runId) {
			await t.deleteIfHeld(key.delivery(source, dedupeKey), runId);
		},
	};
}
