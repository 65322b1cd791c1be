import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

// Single-table layout (docs/how-a-run-works.md › How a run works). Shared by the store adapter, the
// local stack and infra/storage.ts.

export const INDEXES = {
	/** Runs of an issue, oldest first. */
	byIssue: { hashKey: "gsi1pk", rangeKey: "gsi1sk" },
	/** Runs in a status ordered by last update (the sweeper's and stats' view). */
	byStatus: { hashKey: "gsi2pk", rangeKey: "gsi2sk" },
	/** Every run by creation (ULID order): the API's newest-first listing. */
	byCreated: { hashKey: "gsi3pk", rangeKey: "gsi3sk" },
} as const;
export type IndexName = keyof typeof INDEXES;

export const TTL_ATTRIBUTE = "expiresAt";

export const key = {
	run: (runId: string) => ({ pk: `RUN#${runId}`, sk: "RUN" }),
	event: (runId: string, eventId: string) => ({ pk: `RUN#${runId}`, sk: `EVT#${eventId}` }),
	/** The set of runs holding one of the `limits.max_concurrent_runs` slots. */
	runSlots: { pk: "SLOTS", sk: "RUNS" },
	issueLock: (source: string, issueId: string) => ({
		pk: `ISSUE#${source}#${issueId}`,
		sk: "ACTIVE",
	}),
	/** A webhook delivery, by the SHA-256 of what its signature covers. */
	delivery: (source: string, dedupeKey: string) => ({
		pk: `DELIVERY#${source}#${dedupeKey}`,
		sk: "DELIVERY",
	}),
	/** An attempt's code host token, until its task takes it (a partition of its own: IAM scopes the task's DeleteItem to it). */
	stepToken: (a: { runId: string; stepIndex: number; attempt: number; nonce: string }) => ({
		pk: `TOKEN#${a.runId}#${a.stepIndex}#${a.attempt}#${a.nonce}`,
		sk: "TOKEN",
	}),
	/** The run that opened a pull request, by its web URL. */
	pullRequest: (url: string) => ({ pk: `PR#${url}`, sk: "RUN" }),
	/** Per-repo guardrails: recent failure summaries offered to later prompts. */
	guardrail: (repo: string, id: string) => ({ pk: `REPO#${repo}`, sk: `GUARD#${id}` }),
	/** The daily budget's ledger: what the attempts that ended on a UTC day cost. */
	spend: (day: string) => ({ pk: `SPEND#${day}`, sk: "SPEND" }),
	/** The stats of the runs created on a UTC day (src/domain/day-stats.ts). */
	stats: (day: string) => ({ pk: `STATS#${day}`, sk: "STATS" }),
	issuePartition: (source: string, issueId: string) => `ISSUE#${source}#${issueId}`,
	statusPartition: (status: string) => `STATUS#${status}`,
	feedPartition: "RUNS",
};

export function createTableInput(tableName: string): CreateTableCommandInput {
	const attrs = ["pk", "sk", ...Object.values(INDEXES).flatMap((i) => [i.hashKey, i.rangeKey])];
	return {
		TableName: tableName,
		BillingMode: "PAY_PER_REQUEST",
		AttributeDefinitions: attrs.map((a) => ({ AttributeName: a, AttributeType: "S" })),
		KeySchema: [
			{ AttributeName: "pk", KeyType: "HASH" },
			{ AttributeName: "sk", KeyType: "RANGE" },
		],
		GlobalSecondaryIndexes: Object.entries(INDEXES).map(([name, i]) => ({
			IndexName: name,
			KeySchema: [
				{ AttributeName: i.hashKey, KeyType: "HASH" },
				{ AttributeName: i.rangeKey, KeyType: "RANGE" },
			],
			Projection: { ProjectionType: "ALL" },
		})),
	};
}

/**
 * What the agent task's IAM role lets it write (infra/agent.ts), besides reading its run: top-level
 * attributes of run items (its step's fields live under `steps`; timeline entries are created with
 * UpdateItem) and of the repo's guardrail items. src/task/sandbox/permissions.test.ts holds the task to it.
 */
export const TASK_WRITABLE = {
	run: ["steps", "kind", "id", "at", "type", "step", "message", "data"],
	guardrail: ["kind", "at", "runId", "issueKey", "provider", "failure", "summary"],
} as const;
