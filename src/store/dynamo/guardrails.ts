import { DeleteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { type Guardrail, MAX_GUARDRAILS } from "../../domain/guardrails";
import type { GuardrailStore } from "../guardrails";
import { type DynamoTable, stripKeys } from "./client";
import { key } from "./table";

/** A repo's guardrails: items in the repo's partition, newest last by their ULIDs. */
export function dynamoGuardrails(t: DynamoTable): GuardrailStore {
	const newest = (repo: string, extra: { ProjectionExpression?: string; Limit?: number }) =>
		t.doc.send(
			new QueryCommand({
				TableName: t.name,
				KeyConditionExpression: "pk = :pk AND begins_with(sk, :g)",
				ExpressionAttributeValues: { ":pk": key.guardrail(repo, "").pk, ":g": "GUARD#" },
				ScanIndexForward: false,
				...extra,
			}),
		);
	return {
		async addGuardrail(repo, entry, keep = MAX_GUARDRAILS) {
			await t.createWithUpdate(key.guardrail(repo, ulid()), { kind: "guardrail", ...entry });
			const out = await newest(repo, { ProjectionExpression: "pk, sk" });
			for (const old of (out.Items ?? []).slice(keep))
				await t.doc.send(new DeleteCommand({ TableName: t.name, Key: { pk: old.pk, sk: old.sk } }));
		},

		async guardrails(repo, limit = MAX_GUARDRAILS) {
			const out = await newest(repo, { Limit: limit });
			return (out.Items ?? []).map(stripKeys<Guardrail>);
		},
	};
}
