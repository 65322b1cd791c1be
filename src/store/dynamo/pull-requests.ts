import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { PullRequestStore } from "../pull-requests";
import { type DynamoTable, isConditionFailure } from "./client";
import { key } from "./table";

/** One item per pull request a run opened; never expires (a pull request may stay open for months). */
export function dynamoPullRequests(t: DynamoTable): PullRequestStore {
	return {
		async linkPullRequest(url, runId) {
			try {
				await t.doc.send(
					new PutCommand({
						TableName: t.name,
						Item: { ...key.pullRequest(url), kind: "pullRequest", runId },
						ConditionExpression: "attribute_not_exists(pk)",
					}),
				);
			} catch (err) {
				if (!isConditionFailure(err)) throw err;
			}
		},

		async runOfPullRequest(url) {
			const out = await t.doc.send(
				new GetCommand({ TableName: t.name, Key: key.pullRequest(url), ConsistentRead: true }),
			);
			const runId = out.Item?.runId;
			return typeof runId === "string" ? runId : undefined;
		},
	};
}
