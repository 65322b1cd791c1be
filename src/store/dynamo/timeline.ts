import { ulid } from "ulid";
import type { RunEvent, TimelineStore } from "../timeline";
import { type DynamoTable, stripKeys } from "./client";
import { decodeCursor, eventCursor } from "./cursor";
import { key } from "./table";

/** A run's timeline: items in the run's partition, sorted by their ULIDs. */
export function dynamoTimeline(t: DynamoTable): TimelineStore {
	return {
		async appendEvent(runId, event) {
			const full: RunEvent = { id: ulid(), at: event.at ?? new Date().toISOString(), ...event };
			await t.createWithUpdate(key.event(runId, full.id), { kind: "event", ...full });
			return full;
		},

		async listEvents(runId, limit, from = {}) {
			const start = from.after
				? key.event(runId, from.after)
				: decodeCursor(from.cursor, eventCursor(runId));
			return t.queryPage(
				{
					TableName: t.name,
					KeyConditionExpression: "pk = :pk AND begins_with(sk, :evt)",
					ExpressionAttributeValues: { ":pk": key.run(runId).pk, ":evt": "EVT#" },
					ScanIndexForward: true,
				},
				limit,
				start,
				[],
				stripKeys<RunEvent>,
			);
		},
	};
}
