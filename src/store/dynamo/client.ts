import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
	DeleteCommand,
	type DynamoDBDocumentClient,
	QueryCommand,
	type QueryCommandInput,
	UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { Page } from "../runs";
import { encodeCursor } from "./cursor";
import { Expression } from "./expression";

export type RequestObserver = (command: string, input: unknown) => void;

/** Storage-only attributes: the keys, and `repoNames`, which lets a list be filtered by repo. */
const KEY_ATTRS = [
	"pk",
	"sk",
	"gsi1pk",
	"gsi1sk",
	"gsi2pk",
	"gsi2sk",
	"gsi3pk",
	"gsi3sk",
	"kind",
	"repoNames",
];

export const isConditionFailure = (err: unknown) =>
	err instanceof ConditionalCheckFailedException ||
	(err as { name?: string })?.name === "ConditionalCheckFailedException";

/** An item without its storage-only attributes: the run, event or guardrail it holds. */
export function stripKeys<T>(item: Record<string, unknown>): T {
	const rest = { ...item };
	for (const k of KEY_ATTRS) delete rest[k];
	return rest as T;
}

/** The single table every store module reads and writes, and what watches its requests. */
export class DynamoTable {
	private readonly observers = new Set<RequestObserver>();

	constructor(
		readonly doc: DynamoDBDocumentClient,
		readonly name: string,
	) {
		doc.middlewareStack.add(
			(next, context) => (args) => {
				for (const observe of this.observers) observe(context.commandName ?? "", args.input);
				return next(args);
			},
			{ step: "initialize", name: "lisaRequestObserver", override: true },
		);
	}

	/** Deletes a claim (an issue lock, a delivery) only while `runId` holds it: a late release is a no-op. */
	async deleteIfHeld(key: Record<string, string>, runId: string): Promise<void> {
		try {
			await this.doc.send(
				new DeleteCommand({
					TableName: this.name,
					Key: key,
					ConditionExpression: "runId = :me",
					ExpressionAttributeValues: { ":me": runId },
				}),
			);
		} catch (err) {
			if (!isConditionFailure(err)) throw err;
		}
	}

	/** Sees every request (operation name and input) until the returned function is called. */
	observe(observer: RequestObserver): () => void {
		this.observers.add(observer);
		return () => this.observers.delete(observer);
	}

	/**
	 * Creates a new item with UpdateItem rather than PutItem: the agent task's IAM role may only
	 * update named attributes, so it can add timeline entries and guardrails but never replace an
	 * item such as the run's.
	 */
	async createWithUpdate(
		itemKey: { pk: string; sk: string },
		fields: Record<string, unknown>,
	): Promise<void> {
		const e = new Expression();
		for (const [field, v] of Object.entries(fields))
			if (v !== undefined) e.assign(e.name(field), v);
		await this.doc.send(
			new UpdateCommand({
				TableName: this.name,
				Key: itemKey,
				UpdateExpression: e.toString(),
				ConditionExpression: "attribute_not_exists(pk)",
				ExpressionAttributeNames: e.names,
				ExpressionAttributeValues: e.values,
			}),
		);
	}

	/**
	 * Reads pages until `limit` items matched (a filter can thin pages out) and returns a cursor
	 * built from the last returned item, so the next page starts exactly after it.
	 */
	async queryPage<T>(
		input: QueryCommandInput,
		limit: number,
		from: Record<string, unknown> | undefined,
		indexKeys: string[],
		map: (item: Record<string, unknown>) => T,
	): Promise<Page<T>> {
		// One item past the limit tells whether there is a next page, so a page that ends exactly at
		// the last item has no cursor.
		const items: Record<string, unknown>[] = [];
		let start = from;
		for (let pages = 0; pages < 10 && items.length <= limit; pages++) {
			const out = await this.doc.send(
				new QueryCommand({
					...input,
					Limit: limit + 1 - items.length + (input.FilterExpression ? 20 : 0),
					ExclusiveStartKey: start,
				}),
			);
			items.push(...(out.Items ?? []));
			start = out.LastEvaluatedKey;
			if (!start) break;
		}
		const page = items.slice(0, limit);
		const last = page[page.length - 1];
		// More than a page matched, or the page cap stopped a filtered read before the end (then an
		// empty page still carries where to go on).
		const more = items.length > limit || start !== undefined;
		const position = last
			? Object.fromEntries(["pk", "sk", ...indexKeys].map((k) => [k, last[k]]))
			: start;
		const nextCursor = more && position ? encodeCursor(position) : undefined;
		return { items: page.map(map), nextCursor };
	}
}
