import type { RunAnswer, RunsAnswer, StatsAnswer } from "../api/schemas";
import { runEnded } from "../domain/events";
import { isTerminalRun } from "../domain/states";
import type { LisaClient } from "./client";
import { CliError } from "./exit";
import { changedLines, overview, redraw, runDetail } from "./format";
import { getRun, sleep, Timeline } from "./timeline";

// `lisa status [runId] [--watch]`: one run (followed to its end with --watch), or the overview.

export interface StatusOptions {
	runId?: string;
	watch: boolean;
	json: boolean;
	intervalSeconds: number;
}

export interface Output {
	write(text: string): void;
	/** A terminal: --watch redraws in place instead of printing what changed. */
	isTTY: boolean;
	columns: number;
}

async function showRun(client: LisaClient, runId: string, opts: StatusOptions, out: Output) {
	const { text, body: run } = await getRun(client, runId);
	if (opts.json) {
		out.write(`${text}\n`);
		return 0;
	}
	const timeline = new Timeline(client, runId);
	await timeline.poll();
	out.write(`${runDetail(run, timeline.events, { apiUrl: client.conn.url }).join("\n")}\n`);
	return 0;
}

/** Follows the run until it is terminal: exit 0 when it succeeded, 1 otherwise. */
async function watchRun(client: LisaClient, runId: string, opts: StatusOptions, out: Output) {
	const timeline = new Timeline(client, runId);
	let shown: string[] = [];
	let lastJson = "";
	for (;;) {
		const { text, body: run } = await getRun(client, runId);
		if (opts.json) {
			if (text !== lastJson) out.write(`${text}\n`);
			lastJson = text;
		} else {
			await timeline.poll();
			if (isTerminalRun(run.status)) await timeline.until(runEnded(run.status), 3_000, 200);
			const lines = runDetail(run, timeline.events, { apiUrl: client.conn.url });
			out.write(
				out.isTTY
					? redraw(shown.length, lines, out.columns)
					: changedLines(shown, lines)
							.map((l) => `${l}\n`)
							.join(""),
			);
			shown = lines;
		}
		if (isTerminalRun(run.status)) return run.status === "succeeded" ? 0 : 1;
		await sleep(opts.intervalSeconds * 1000);
	}
}

const ACTIVE = ["running", "awaiting_approval", "planning", "queued"] as const;

async function showOverview(client: LisaClient, opts: StatusOptions, out: Output) {
	const { body: stats } = await client.get<StatsAnswer>("/api/stats");
	const active: RunAnswer[] = [];
	for (const status of ACTIVE)
		active.push(...(await client.get<RunsAnswer>("/api/runs", { status, limit: "100" })).body.runs);
	if (opts.json) out.write(`${JSON.stringify({ stats, active })}\n`);
	else out.write(`${overview(stats, active, new Date()).join("\n")}\n`);
	return 0;
}

export async function statusCommand(
	client: LisaClient,
	opts: StatusOptions,
	out: Output,
): Promise<number> {
	if (!opts.runId) {
		if (opts.watch)
			throw new CliError("--watch follows one run: pass its id (lisa runs lists them)");
		return showOverview(client, opts, out);
	}
	return opts.watch
		? watchRun(client, opts.runId, opts, out)
		: showRun(client, opts.runId, opts, out);
}
