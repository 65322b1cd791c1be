import { defineCommand } from "citty";
import { readSettings } from "../config/settings";
import { LisaClient, resolveConnection } from "./client";
import { CliError, exitWith } from "./exit";

// The commands that inspect, act on or set up Lisa (`start` and `run` are in main.ts). Each imports its
// implementation when it runs, so no command pays for another's dependencies (the SDKs, yaml).

const print = (line: string) => console.log(line);

const connection = {
	url: {
		type: "string",
		description: "Lisa's URL (default: LISA_URL, else http://127.0.0.1:$PORT or 8787)",
	},
	token: {
		type: "string",
		description:
			"API token (default: LISA_API_TOKEN, else LISA_READ_TOKEN, else <LISA_DATA_DIR>/api-token)",
	},
} as const;

const clientFor = (args: { url?: string; token?: string }) =>
	new LisaClient(resolveConnection(args, process.env));

/** An `--interval`: seconds between polls, more than none and at most a day (a timer's range). */
export function intervalSeconds(text: string): number {
	const seconds = Number(text);
	if (!(seconds > 0 && seconds <= 86_400))
		throw new CliError(`--interval must be a number of seconds > 0 and ≤ 86400 (got "${text}")`);
	return seconds;
}

export const runs = defineCommand({
	meta: { name: "runs", description: "List runs, newest first" },
	args: {
		status: {
			type: "string",
			description: "queued|planning|running|awaiting_approval|succeeded|failed|cancelled",
		},
		source: { type: "string", description: "linear|trello|github" },
		repo: { type: "string", description: "Runs with a step in this repo" },
		issue: { type: "string", description: "Runs of this issue (key or id)" },
		since: { type: "string", description: "Created at or after (ISO time)" },
		until: { type: "string", description: "Created before (ISO time)" },
		limit: { type: "string", description: "Runs per page (API default 20, at most 100)" },
		cursor: { type: "string", description: "The next page (printed after a full page)" },
		json: { type: "boolean", description: "Print the API's JSON as it is" },
		...connection,
	},
	run: ({ args }) =>
		exitWith(async () =>
			(await import("./runs")).runsCommand(
				clientFor(args),
				{
					status: args.status,
					source: args.source,
					repo: args.repo,
					issue: args.issue,
					since: args.since,
					until: args.until,
					limit: args.limit,
					cursor: args.cursor,
					json: args.json === true,
				},
				print,
			),
		),
});

export const status = defineCommand({
	meta: {
		name: "status",
		description: "One run (followed to its end with --watch), or an overview without a run id",
	},
	args: {
		runId: { type: "positional", required: false, description: "The run's id" },
		watch: {
			type: "boolean",
			description: "Follow the run until it ends (exit 0 if it succeeded, else 1)",
		},
		json: { type: "boolean", description: "Print JSON (with --watch: one line per change)" },
		interval: { type: "string", default: "1", description: "Seconds between polls with --watch" },
		...connection,
	},
	run: ({ args }) =>
		exitWith(async () => {
			const interval = intervalSeconds(args.interval);
			const { statusCommand } = await import("./status");
			return statusCommand(
				clientFor(args),
				{
					runId: args.runId || undefined,
					watch: args.watch === true,
					json: args.json === true,
					intervalSeconds: interval,
				},
				{
					write: (t) => process.stdout.write(t),
					isTTY: process.stdout.isTTY === true,
					columns: process.stdout.columns || 120,
				},
			);
		}),
});

const runIdArg = { type: "positional", required: true, description: "The run's id" } as const;

export const cancel = defineCommand({
	meta: { name: "cancel", description: "Cancel an active run (its tasks are stopped)" },
	args: { runId: runIdArg, ...connection },
	run: ({ args }) =>
		exitWith(async () =>
			(await import("./actions")).cancelCommand(clientFor(args), args.runId, print),
		),
});

export const retry = defineCommand({
	meta: { name: "retry", description: "Start a finished run's issue again, as a new run" },
	args: { runId: runIdArg, ...connection },
	run: ({ args }) =>
		exitWith(async () =>
			(await import("./actions")).retryCommand(clientFor(args), args.runId, print),
		),
});

const PLAN_FLAGS = new Set(["_", "issue", "continue", "url", "token"]);

export const plan = defineCommand({
	meta: {
		name: "plan",
		description:
			"Plan an issue into dependent sub-issues worked in order (an epic), or resume an epic run",
	},
	args: {
		issue: { type: "string", description: "Start an epic for this issue (id, key or URL)" },
		continue: {
			type: "string",
			description:
				"Resume this finished epic run: its plan and sub-issues kept, failed tasks restarted",
		},
		...connection,
	},
	run: ({ args }) =>
		exitWith(async () =>
			(await import("./plan-epic")).planCommand(
				clientFor(args),
				{
					issue: args.issue,
					continue: args.continue,
					extra: args._.map(String),
					unknown: Object.keys(args).filter((k) => !PLAN_FLAGS.has(k)),
				},
				print,
			),
		),
});

export const logs = defineCommand({
	meta: {
		name: "logs",
		description: "A run's timeline with its agents' output (followed to its end with --follow)",
	},
	args: {
		runId: runIdArg,
		follow: {
			type: "boolean",
			alias: "f",
			description: "Print new entries until the run ends (exit 0 if it succeeded, else 1)",
		},
		json: { type: "boolean", description: "One JSON line per entry, as the API has it" },
		interval: { type: "string", default: "1", description: "Seconds between polls with --follow" },
		...connection,
	},
	run: ({ args }) =>
		exitWith(async () => {
			const interval = intervalSeconds(args.interval);
			const { logsCommand } = await import("./logs");
			return logsCommand(
				clientFor(args),
				{
					runId: args.runId,
					follow: args.follow === true,
					json: args.json === true,
					intervalSeconds: interval,
				},
				(t) => process.stdout.write(t),
			);
		}),
});

export const doctor = defineCommand({
	meta: {
		name: "doctor",
		description: "Check the config, git, the agent CLIs, the tracker, GitHub (and Lisa at --url)",
	},
	args: {
		url: { type: "string", description: "Also check that Lisa answers here (default: LISA_URL)" },
	},
	run: ({ args }) =>
		exitWith(async () => {
			const url = (args.url ?? process.env.LISA_URL)?.trim().replace(/\/+$/, "");
			const { doctorCommand } = await import("./doctor-checks");
			return doctorCommand(
				{ settings: readSettings(process.env), env: process.env, url: url || undefined },
				print,
			);
		}),
});

export const init = defineCommand({
	meta: {
		name: "init",
		description: "Write a commented config to LISA_CONFIG or .lisa/config.yaml",
	},
	args: {
		source: { type: "string", default: "linear", description: "linear|trello|github" },
		force: { type: "boolean", description: "Overwrite an existing config" },
	},
	run: ({ args }) =>
		exitWith(async () =>
			(await import("./init")).initCommand(
				{
					file: readSettings(process.env).configPath,
					source: args.source,
					force: args.force === true,
				},
				print,
			),
		),
});

export const config = defineCommand({
	meta: { name: "config", description: "Show, read or change the config (comments kept)" },
	args: {
		show: { type: "boolean", description: "Print the effective config (defaults applied) as YAML" },
		get: { type: "string", description: "Print one value: limits.max_attempts, repos.0.name…" },
		set: { type: "string", description: "Change one value: <path>=<YAML value>; validated first" },
	},
	run: ({ args }) =>
		exitWith(async () =>
			(await import("./config-command")).configCommand(
				{
					file: readSettings(process.env).configPath,
					show: args.show === true,
					get: args.get,
					set: args.set,
				},
				print,
			),
		),
});
