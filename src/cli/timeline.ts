import type { EventAnswer, EventsAnswer, RunAnswer } from "../api/schemas";
import type { LisaClient } from "./client";

// A run and its timeline as the CLI reads them (`lisa status`, `lisa logs`).

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `/api/runs/<id>`, or a path under it (`events`, `cancel`): the id as a path segment. */
export const runPath = (runId: string, under?: string) =>
	`/api/runs/${encodeURIComponent(runId)}${under ? `/${under}` : ""}`;

/** The run's timeline, read incrementally: each poll resumes from the last page it read. */
export class Timeline {
	readonly events: EventAnswer[] = [];
	private readonly seen = new Set<string>();
	private cursor: string | undefined;

	constructor(
		private readonly client: LisaClient,
		private readonly runId: string,
	) {}

	async poll(): Promise<void> {
		const path = runPath(this.runId, "events");
		for (;;) {
			const { body } = await this.client.get<EventsAnswer>(
				path,
				{ limit: "500", cursor: this.cursor },
				`no run ${this.runId}`,
			);
			for (const e of body.events)
				if (!this.seen.has(e.id)) {
					this.seen.add(e.id);
					this.events.push(e);
				}
			// The last page has no next cursor: the next poll reads it again for what was added since.
			if (!body.nextCursor || body.nextCursor === this.cursor || !body.events.length) return;
			this.cursor = body.nextCursor;
		}
	}

	/**
	 * Polls until an event of `type` arrived, for at most `ms`: the pipeline records a run's end
	 * on the run first and in its timeline just after.
	 */
	async until(type: string, ms: number, everyMs: number): Promise<void> {
		const deadline = Date.now() + ms;
		while (!this.events.some((e) => e.type === type) && Date.now() < deadline) {
			await sleep(everyMs);
			await this.poll();
		}
	}
}

export function getRun(client: LisaClient, runId: string) {
	return client.get<RunAnswer>(runPath(runId), {}, `no run ${runId}`);
}
