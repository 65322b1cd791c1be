import { runEnded } from "../domain/events";
import { isTerminalRun } from "../domain/states";
import type { LisaClient } from "./client";
import { logLines } from "./format";
import { getRun, sleep, Timeline } from "./timeline";

// `lisa logs <run> [--follow]`: the run's whole timeline, the agents' output with it (each
// `agent.output` event is a piece of what the agent printed), read from GET /api/runs/:id/events.

export interface LogsOptions {
	runId: string;
	follow: boolean;
	json: boolean;
	intervalSeconds: number;
}

/** Prints the timeline; with --follow until the run ends: exit 0 if it succeeded, else 1. */
export async function logsCommand(
	client: LisaClient,
	opts: LogsOptions,
	write: (text: string) => void,
): Promise<number> {
	// The run first: an unknown id is "no run <id>", before any timeline is read.
	let { body: run } = await getRun(client, opts.runId);
	const timeline = new Timeline(client, opts.runId);
	let printed = 0;
	const flush = () => {
		const fresh = timeline.events.slice(printed);
		printed = timeline.events.length;
		if (fresh.length)
			write(
				`${fresh.flatMap((e) => (opts.json ? [JSON.stringify(e)] : logLines(e, run.steps))).join("\n")}\n`,
			);
	};
	await timeline.poll();
	flush();
	if (!opts.follow) return 0;
	for (;;) {
		if (isTerminalRun(run.status)) {
			// The run's end is recorded on the run first and in its timeline just after.
			await timeline.until(runEnded(run.status), 3_000, 200);
			flush();
			return run.status === "succeeded" ? 0 : 1;
		}
		await sleep(opts.intervalSeconds * 1000);
		run = (await getRun(client, opts.runId)).body;
		await timeline.poll();
		flush();
	}
}
