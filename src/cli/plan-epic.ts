import type { LisaClient } from "./client";
import { CliError } from "./exit";
import { runPath } from "./timeline";

// `lisa plan --issue <key>` starts an epic (POST /api/epics) and `lisa plan --continue <run>`
// resumes one (POST /api/runs/:id/retry, after GET /api/epics/:id said it is one):
// docs/epics.md › Epics.

export interface PlanOptions {
	issue?: string;
	continue?: string;
	/** What citty read as positional arguments. */
	extra: string[];
	/** Flags citty read but the command does not know (it ignores them itself). */
	unknown: string[];
}

const USAGE =
	"lisa plan takes one of --issue <key> (plan the issue into sub-issues) or --continue <run> (resume an epic run)";

/** How to follow the epic: its status in the CLI and its page on the dashboard. */
const watching = (client: LisaClient, id: string) =>
	`npx lisa status ${id} --watch follows it; its tasks: ${client.conn.url}/runs/${id}`;

export async function planCommand(
	client: LisaClient,
	opts: PlanOptions,
	print: (line: string) => void,
): Promise<number> {
	const issue = opts.issue?.trim();
	const runId = opts.continue?.trim();
	if (opts.unknown.length) throw new CliError(`${USAGE}: there is no option --${opts.unknown[0]}`);
	if (opts.extra.length)
		throw new CliError(
			`${USAGE}, not "${opts.extra.join(" ")}"${issue || runId ? "" : ` (did you mean --issue ${opts.extra[0]}?)`}`,
		);
	if (!issue === !runId) throw new CliError(issue ? `${USAGE}, not both` : USAGE);
	if (issue) {
		const { body } = await client.post<{ id: string }>("/api/epics", undefined, { issue });
		print(`epic run ${body.id} plans ${issue}: ${watching(client, body.id)}`);
		return 0;
	}
	const id = runId as string;
	// Lisa's answer when the run is not an epic (an issue's run, a task's run) says which it is.
	await client.get(`/api/epics/${encodeURIComponent(id)}`, {}, undefined);
	const { body } = await client.post<{ id: string; retryOf: string }>(
		runPath(id, "retry"),
		`no run ${id}`,
	);
	print(`epic run ${body.id} continues ${body.retryOf}: ${watching(client, body.id)}`);
	return 0;
}
