import type { TimelineEventType } from "../../domain/events";
import { headTail, redact } from "../../domain/redact";
import type { Logger } from "../../log";
import type { TaskStore } from "../../store";

const MAX_MESSAGE = 2_000;

/**
 * The task's entries in the run's timeline (GET /api/runs/:id/events): redacted, bounded, and never
 * fatal — a lost event must not fail the step.
 */
export class Timeline {
	constructor(
		private readonly store: TaskStore,
		private readonly runId: string,
		private readonly stepIndex: number,
		private readonly secrets: readonly string[],
		private readonly log: Logger,
	) {}

	clean(text: string, max = MAX_MESSAGE): string {
		return headTail(redact(text, this.secrets), max);
	}

	/** Every string inside a value (a plan's scopes, a list of errors) cleaned like a message. */
	private cleanData(value: unknown, depth = 0): unknown {
		if (typeof value === "string") return this.clean(value);
		if (value === null || typeof value !== "object" || depth > 8) return value;
		if (Array.isArray(value)) return value.map((v) => this.cleanData(v, depth + 1));
		return Object.fromEntries(
			Object.entries(value).map(([k, v]) => [k, this.cleanData(v, depth + 1)]),
		);
	}

	async add(
		type: TimelineEventType,
		message: string,
		data?: Record<string, unknown>,
	): Promise<void> {
		const clean = data ? (this.cleanData(data) as Record<string, unknown>) : undefined;
		const entry = { type, step: this.stepIndex, message: this.clean(message), data: clean };
		this.log.info({ runId: this.runId, ...entry }, message);
		try {
			await this.store.appendEvent(this.runId, entry);
		} catch (err) {
			this.log.warn({ err, type }, "could not write a run event");
		}
	}
}
