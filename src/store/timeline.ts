import type { TimelineEventType } from "../domain/events";
import type { Page } from "./runs";

/** One entry of a run's timeline. */
export interface RunEvent {
	id: string;
	at: string;
	type: TimelineEventType;
	step?: number;
	message: string;
	data?: Record<string, unknown>;
}

/** A run's timeline: append-only, in the order written. */
export interface TimelineStore {
	appendEvent(
		runId: string,
		event: Omit<RunEvent, "id" | "at"> & { at?: string },
	): Promise<RunEvent>;
	/** The timeline from its start, from a page's cursor, or after the event with id `after`. */
	listEvents(
		runId: string,
		limit: number,
		from?: { cursor?: string; after?: string },
	): Promise<Page<RunEvent>>;
}
