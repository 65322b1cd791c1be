import { ULID_PATTERN } from "../../domain/ids";
import type { RunStatus } from "../../domain/states";
import { InvalidCursor } from "../errors";
import { INDEXES, type IndexName, key } from "./table";

// A listing's cursor is the last returned item's keys in base64url. It becomes DynamoDB's
// ExclusiveStartKey, so a made-up or foreign one (another listing's, another run's) is refused here
// rather than by DynamoDB.

export const encodeCursor = (k: Record<string, unknown>) =>
	Buffer.from(JSON.stringify(k)).toString("base64url");

/** What a cursor may hold: exactly the keys the store put in it, with the values it writes. */
export type CursorShape = (k: Record<string, unknown>) => boolean;

/** Longest cursor the store makes (a run's keys in base64url) is far shorter. */
const MAX_CURSOR = 1024;

/** The start key a cursor names, if it is one this store made for this listing; else InvalidCursor. */
export function decodeCursor(
	cursor: string | undefined,
	shape: CursorShape,
): Record<string, unknown> | undefined {
	if (cursor === undefined) return undefined;
	if (cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursor();
	let parsed: unknown;
	try {
		parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
	} catch {
		throw new InvalidCursor();
	}
	if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
		throw new InvalidCursor();
	if (!shape(parsed as Record<string, unknown>)) throw new InvalidCursor();
	return parsed as Record<string, unknown>;
}

const ULID = ULID_PATTERN.source.slice(1, -1); // the one shape of run and event ids, unanchored
const RUN_PK = new RegExp(`^RUN#(${ULID})$`);
const EVENT_SK = new RegExp(`^EVT#${ULID}$`);
/** `<updatedAt>#<runId>`: the status index's sort key. */
const STATUS_SK = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z#(.+)$/;

const hasExactly = (k: Record<string, unknown>, names: string[]) =>
	Object.keys(k).length === names.length && names.every((n) => typeof k[n] === "string");

/** A position in a runs listing: a run item's keys and the index's, all of the same run. */
export function runCursor(index: IndexName, status?: RunStatus): CursorShape {
	const { hashKey, rangeKey } = INDEXES[index];
	return (k) => {
		if (!hasExactly(k, ["pk", "sk", hashKey, rangeKey]) || k.sk !== "RUN") return false;
		const runId = RUN_PK.exec(k.pk as string)?.[1];
		if (!runId) return false;
		if (index === "byCreated") return k[hashKey] === key.feedPartition && k[rangeKey] === runId;
		return (
			status !== undefined &&
			k[hashKey] === key.statusPartition(status) &&
			STATUS_SK.exec(k[rangeKey] as string)?.[2] === runId
		);
	};
}

/** A position in one run's timeline: an event of that run. */
export const eventCursor =
	(runId: string): CursorShape =>
	(k) =>
		hasExactly(k, ["pk", "sk"]) && k.pk === key.run(runId).pk && EVENT_SK.test(k.sk as string);
