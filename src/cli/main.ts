// First (a bare import, so no sorting moves it): it decides whether citty colours its output.
import "./plain-output";
import { defineCommand, runMain } from "citty";
import {
	cancel,
	config,
	doctor,
	init,
	intervalSeconds,
	logs,
	plan,
	retry,
	runs,
	status,
} from "./commands";
import { CliError, exitWith } from "./exit";
import { restoreNoColor } from "./plain-output";

// The pinned AWS SDK warns about its future Node floor; it changes nothing for this version.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
restoreNoColor();

const start = defineCommand({
	meta: {
		name: "start",
		description: "Run the whole pipeline on this machine (embedded DynamoDB and SQS)",
	},
	async run() {
		// Imported when used: the other commands start faster without the stack's dependencies.
		const { startLocalStack } = await import("../local/stack");
		const { banner, readiness } = await import("./doctor");
		const { agentChecks } = await import("./doctor-checks");
		const stack = await startLocalStack();
		const { settings } = stack;
		const config = stack.deps.config();
		const agents = config.status === "ok" ? agentChecks(config.config, process.env) : [];
		console.log(
			banner({
				url: stack.url,
				publicUrl: settings.publicUrl ?? stack.url,
				apiToken: stack.apiToken,
				readToken: stack.readToken,
				dataDir: settings.dataDir,
				agentUids: stack.agentUids,
				readiness: readiness(settings, config, agents),
			}),
		);
		let stopping: number | undefined;
		const shutdown = async (why: string) => {
			// One kill can arrive twice: a terminal's Ctrl-C or a kill of the process group reaches
			// both npm and this process, and npm forwards it. Only a later one forces the exit.
			if (stopping !== undefined) {
				if (Date.now() - stopping > 1_000) process.exit(1);
				return;
			}
			stopping = Date.now();
			console.log(
				`\n${why}: stopping (running tasks are stopped and re-driven on the next start)…`,
			);
			await stack.stop();
			process.exit(0);
		};
		for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
			process.on(signal, () => void shutdown(signal));
		// `npm start` killed without passing the signal on (SIGHUP, SIGKILL): this process (npm's
		// child, the script `exec`s it) is re-parented, and stops instead of serving on as an orphan.
		// Only under npm: started some other way (`nohup node … start &`), its parent may go freely.
		if (process.env.npm_lifecycle_event) {
			const parent = process.ppid;
			setInterval(() => {
				if (process.ppid !== parent) void shutdown(`npm (process ${parent}) is gone`);
			}, 1_000).unref();
		}
	},
});

const run = defineCommand({
	meta: {
		name: "run",
		description:
			"Polling mode (no public URL needed): work through the labelled issues in pick_from, one at a time",
	},
	args: {
		once: { type: "boolean", description: "Resolve one issue, then stop" },
		watch: { type: "boolean", description: "Keep polling when no issue waits instead of stopping" },
		issue: { type: "string", description: "Resolve this issue (id, key or URL) only" },
		limit: { type: "string", default: "0", description: "Stop after N issues (0: no limit)" },
		"dry-run": { type: "boolean", description: "Print what would happen, change nothing" },
		interval: { type: "string", default: "30", description: "Seconds between polls with --watch" },
	},
	run: ({ args }) =>
		exitWith(async () => {
			const limit = Number(args.limit);
			if (!Number.isInteger(limit) || limit < 0)
				throw new CliError(`--limit must be a whole number ≥ 0 (got "${args.limit}")`);
			const interval = intervalSeconds(args.interval);
			const { runCommand } = await import("./run");
			return runCommand(
				{
					once: args.once === true,
					watch: args.watch === true,
					issue: args.issue,
					limit,
					dryRun: args["dry-run"] === true,
					intervalSeconds: interval,
				},
				process.env,
			);
		}),
});

const main = defineCommand({
	meta: { name: "lisa", description: "Lisa: tracker issues in, pull requests out" },
	subCommands: { start, run, runs, status, logs, cancel, retry, plan, doctor, init, config },
});

runMain(main);
