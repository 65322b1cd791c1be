import { LINK } from "../src/config/links";
import { INDEXES, TTL_ATTRIBUTE } from "../src/store/dynamo/table";
import { isProduction } from "./config";

// The single table (docs/how-a-run-works.md › How a run works), with the keys and indexes the store
// adapter uses (src/store/dynamo/table.ts).

const keyAttributes = [
	"pk",
	"sk",
	...Object.values(INDEXES).flatMap((i) => [i.hashKey, i.rangeKey]),
];

export const table = new sst.aws.Dynamo("Runs", {
	fields: Object.fromEntries(keyAttributes.map((a) => [a, "string" as const])),
	primaryIndex: { hashKey: "pk", rangeKey: "sk" },
	globalIndexes: Object.fromEntries(
		Object.entries(INDEXES).map(([name, i]) => [
			name,
			{ hashKey: i.hashKey, rangeKey: i.rangeKey },
		]),
	),
	// Delivery-dedupe items expire; AWS deletes them lazily, the store ignores them once expired.
	ttl: TTL_ATTRIBUTE,
	deletionProtection: isProduction($app.stage),
	transform: { table: { pointInTimeRecovery: { enabled: isProduction($app.stage) } } },
});

/** The handlers' access: item reads and writes and index queries; no Scan, no table changes. */
export const tableLink = new sst.Linkable(LINK.table, {
	properties: { name: table.name },
	include: [
		sst.aws.permission({
			actions: [
				"dynamodb:GetItem",
				// The stats read a window's days at once.
				"dynamodb:BatchGetItem",
				"dynamodb:PutItem",
				"dynamodb:UpdateItem",
				"dynamodb:DeleteItem",
				"dynamodb:Query",
			],
			resources: [table.arn, $interpolate`${table.arn}/index/*`],
		}),
	],
});
