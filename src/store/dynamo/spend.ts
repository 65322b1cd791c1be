import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { SpendStore } from "../spend";
import { type DynamoTable, isConditionFailure } from "./client";
import { key } from "./table";

const REPO = "repo:";

/**
 * One item a day: the total and one number per repository, added to in one conditional update
 * that also records the attempt's key, so counting it twice is refused by DynamoDB itself.
 */
export function dynamoSpend(t: DynamoTable): SpendStore {
	return {
		async addSpend(day, attemptKey, usd, repo) {
			try {
				await t.doc.send(
					new UpdateCommand({
						TableName: t.name,
						Key: key.spend(day),
						UpdateExpression: "SET kind = :kind ADD totalUsd :usd, #repo :usd, #keys :key",
						ConditionExpression: "attribute_not_exists(#keys) OR NOT contains(#keys, :one)",
						ExpressionAttributeNames: { "#repo": `${REPO}${repo}`, "#keys": "counted" },
						ExpressionAttributeValues: {
							":kind": "spend",
							":usd": usd,
							":key": new Set([attemptKey]),
							":one": attemptKey,
						},
					}),
				);
			} catch (err) {
				if (!isConditionFailure(err)) throw err;
			}
		},

		async spentOn(day) {
			const out = await t.doc.send(
				new GetCommand({ TableName: t.name, Key: key.spend(day), ConsistentRead: true }),
			);
			const item = out.Item ?? {};
			const byRepo: Record<string, number> = {};
			for (const [k, v] of Object.entries(item))
				if (k.startsWith(REPO) && typeof v === "number") byRepo[k.slice(REPO.length)] = v;
			return { totalUsd: typeof item.totalUsd === "number" ? item.totalUsd : 0, byRepo };
		},
	};
}
