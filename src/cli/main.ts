// First (a bare import, so no sorting moves it): it decides whether citty colours its output.
import "./plain-output";
import { defineCommand, runMain } from "citty";
import { nearest } from "../config/nearest";
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
	run: async () => {
		// Imported when used: the other commands start faster without the stack's dependencies.
		const { startCommand } = await import("./start");
		// It stays up (the server holds the process) until a signal stops it.
		await startCommand(process.env).catch((err) => {
			if (!(err instanceof CliError)) throw err;
			console.error(err.message);
			process.exit(err.exitCode);
		});
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

const image = defineCommand({
	meta: {
		name: "image",
		description:
			"Build the agent task image (Dockerfile.agent) with podman or docker, for LISA_LAUNCHER=container and AWS",
	},
	args: {
		clis: {
			type: "string",
			description: 'The agent CLIs it carries, e.g. "claude codex" (default: all four)',
		},
		tag: {
			type: "string",
			description: "Its name (default: LISA_IMAGE, else localhost/lisa-agent:latest)",
		},
	},
	run: ({ args }) =>
		exitWith(async () => {
			const { buildImage } = await import("../local/container/image");
			const built = await buildImage({
				tag: args.tag?.trim() || process.env.LISA_IMAGE?.trim() || undefined,
				clis: args.clis?.split(/[\s,]+/).filter(Boolean),
			}).catch((err: Error) => {
				throw new CliError(`lisa image: ${err.message}`);
			});
			console.log(`built ${built.tag} (on ${built.base}, with ${built.runtime})`);
			return 0;
		}),
});

const subCommands = {
	start,
	image,
	run,
	runs,
	status,
	logs,
	cancel,
	retry,
	plan,
	doctor,
	init,
	config,
};
const main = defineCommand({
	meta: { name: "lisa", description: "Lisa: tracker issues in, pull requests out" },
	subCommands,
});

// A misspelled command gets the nearest one, not citty's whole usage.
const [command] = process.argv.slice(2);
if (command && !command.startsWith("-") && !Object.hasOwn(subCommands, command)) {
	const near = nearest(command, Object.keys(subCommands));
	console.error(
		`lisa: there is no command "${command}"${near ? `; did you mean \`npx lisa ${near}\`?` : ""} (\`npx lisa --help\` lists them)`,
	);
	process.exit(1);
}
runMain(main);
