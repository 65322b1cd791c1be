import type { RunsAnswer } from "../api/schemas";
import type { LisaClient } from "./client";
import { runsTable } from "./format";

// `lisa runs`: GET /api/runs with the filters passed through; the API validates them.

export interface RunsOptions {
	status?: string;
	source?: string;
	repo?: string;
	issue?: string;
	since?: string;
	until?: string;
	limit?: string;
	cursor?: string;
	json: boolean;
}

export async function runsCommand(
	client: LisaClient,
	opts: RunsOptions,
	print: (line: string) => void,
	now = new Date(),
): Promise<number> {
	const { json, ...query } = opts;
	const { text, body } = await client.get<RunsAnswer>("/api/runs", query);
	if (json) {
		print(text);
		return 0;
	}
	if (!body.runs.length) print("no runs");
	else for (const line of runsTable(body.runs, now)) print(line);
	if (body.nextCursor) print(`more: lisa runs --cursor ${body.nextCursor} (with the same filters)`);
	return 0;
}
