import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { CoordinationStore } from "../coordination";
import { type DynamoTable, isConditionFailure } from "./client";
import { key } from "./table";

/**
 * Run slots are one item holding a string set of run ids, so taking and giving back are
 * idempotent; an issue's lock is one item naming its run.
 */
export function dynamoCoordination(t: DynamoTable): CoordinationStore {
	const store: CoordinationStore = {
		async acquireRunSlot(runId, max) {
			try {
				await t.doc.send(
					new UpdateCommand({
						TableName: t.name,
						Key: key.runSlots,
						UpdateExpression: "ADD #runs :me",
						ConditionExpression:
							"attribute_not_exists(#runs) OR size(#runs) < :max OR contains(#runs, :id)",
						ExpressionAttributeNames: { "#runs": "runs" },
						ExpressionAttributeValues: { ":me": new Set([runId]), ":max": max, ":id": runId },
					}),
				);
				return { acquired: true };
			} catch (err) {
				if (!isConditionFailure(err)) throw err;
				return { acquired: false, active: (await store.runSlotHolders()).length };
			}
		},

		async releaseRunSlot(runId) {
			await t.doc.send(
				new UpdateCommand({
					TableName: t.name,
					Key: key.runSlots,
					UpdateExpression: "DELETE #runs :me",
					ExpressionAttributeNames: { "#runs": "runs" },
					ExpressionAttributeValues: { ":me": new Set([runId]) },
				}),
			);
		},

		async runSlotHolders() {
			const out = await t.doc.send(
				new GetCommand({ TableName: t.name, Key: key.runSlots, ConsistentRead: true }),
			);
			const runs = out.Item?.runs as Set<string> | undefined;
			return runs ? [...runs] : [];
		},

		async acquireIssueLock(source, issueId, runId, takeOverFrom) {
			try {
				await t.doc.send(
					new PutCommand({
						TableName: t.name,
						Item: {
							...key.issueLock(source, issueId),
							kind: "lock",
							runId,
							at: new Date().toISOString(),
						},
						ConditionExpression: takeOverFrom
							? "runId = :old"
							: "attribute_not_exists(pk) OR runId = :me",
						ExpressionAttributeValues: takeOverFrom ? { ":old": takeOverFrom } : { ":me": runId },
					}),
				);
				return { acquired: true };
			} catch (err) {
				if (!isConditionFailure(err)) throw err;
				const holder = await store.issueLockHolder(source, issueId);
				// Released in between: try again.
				if (!holder) return store.acquireIssueLock(source, issueId, runId);
				return { acquired: false, holder };
			}
		},

		async issueLockHolder(source, issueId) {
			const out = await t.doc.send(
				new GetCommand({
					TableName: t.name,
					Key: key.issueLock(source, issueId),
					ConsistentRead: true,
				}),
			);
			return typeof out.Item?.runId === "string" ? out.Item.runId : undefined;
		},

		async releaseIssueLock(source, issueId, runId) {
			await t.deleteIfHeld(key.issueLock(source, issueId), runId);
		},
	};
	return store;
}
