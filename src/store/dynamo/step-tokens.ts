import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { StepTokenStore } from "../step-tokens";
import type { DynamoTable } from "./client";
import { key } from "./table";

/** One item per attempt, expiring by TTL with its token; the task's DeleteItem returns it. */
export function dynamoStepTokens(t: DynamoTable): StepTokenStore {
	return {
		async putStepToken(attempt, token, expiresAt) {
			await t.doc.send(
				new PutCommand({
					TableName: t.name,
					Item: {
						...key.stepToken(attempt),
						kind: "stepToken",
						token,
						expiresAt: Math.floor(Date.parse(expiresAt) / 1000),
					},
				}),
			);
		},

		async takeStepToken(attempt, nowMs) {
			const out = await t.doc.send(
				new DeleteCommand({
					TableName: t.name,
					Key: key.stepToken(attempt),
					ReturnValues: "ALL_OLD",
				}),
			);
			const item = out.Attributes;
			// TTL deletion is lazy in AWS and absent locally: an expired token counts as absent.
			if (typeof item?.token !== "string" || !(item.expiresAt > nowMs / 1000)) return undefined;
			return item.token;
		},
	};
}
