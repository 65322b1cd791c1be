import { defineCommand, runMain } from "citty";
import { startLocalStack } from "../../infra/local/stack";
import { loadConfig } from "../config/load";
import { banner, readiness } from "./doctor";

// The pinned AWS SDK warns about its future Node floor; it changes nothing for this version.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

const start = defineCommand({
	meta: {
		name: "start",
		description: "Run the whole pipeline on this machine (embedded DynamoDB and SQS)",
	},
	async run() {
		const stack = await startLocalStack();
		const { settings } = stack;
		console.log(
			banner({
				url: stack.url,
				publicUrl: settings.publicUrl ?? stack.url,
				apiToken: stack.apiToken,
				dataDir: settings.dataDir,
				readiness: readiness(settings, loadConfig(settings.configPath), process.env),
			}),
		);
		let stopping = false;
		const shutdown = async (signal: string) => {
			if (stopping) process.exit(1); // a second signal forces the exit
			stopping = true;
			console.log(
				`\n${signal}: stopping (running tasks are stopped and re-driven on the next start)…`,
			);
			await stack.stop();
			process.exit(0);
		};
		process.on("SIGINT", () => void shutdown("SIGINT"));
		process.on("SIGTERM", () => void shutdown("SIGTERM"));
	},
});

const main = defineCommand({
	meta: { name: "lisa", description: "Lisa: tracker issues in, pull requests out" },
	subCommands: { start },
});

runMain(main);
