import { StartRefused } from "../local/claims";
import { startLocalStack } from "../local/stack";
import { agentChecksAs, imageAgentChecks } from "./agent-checks";
import { banner, readiness } from "./doctor";
import { CliError } from "./exit";
import { onStop } from "./signals";

/**
 * `lisa start` (`npm start`): the local stack, then what needs attention and how to reach it, until
 * a signal stops it. A condition the start knows (the port or the data dir taken) is one line.
 */
export async function startCommand(env: NodeJS.ProcessEnv): Promise<void> {
	const stack = await startLocalStack({ env }).catch((err) => {
		throw err instanceof StartRefused ? new CliError(`lisa start: ${err.message}`) : err;
	});
	let stopping: Promise<void> | undefined;
	onStop((why) => {
		console.log(`\n${why}: stopping (running tasks are stopped and re-driven on the next start)…`);
		stopping ??= stack.stop().then(() => process.exit(0));
	});
	const { settings, agentReach } = stack;
	const config = stack.deps.config();
	const agents =
		config.status !== "ok"
			? []
			: stack.image
				? imageAgentChecks(config.config, env, stack.image)
				: await agentChecksAs(stack.agentUids, config.config, env, agentReach.path);
	if (stopping) return;
	console.log(
		banner({
			url: stack.url,
			publicUrl: settings.publicUrl ?? stack.url,
			apiToken: stack.apiToken,
			readToken: stack.readToken,
			signInLink: stack.signInLink(),
			dataDir: settings.dataDir,
			agentUids: stack.agentUids,
			agentsConfined: stack.agentsConfined,
			workspaces: agentReach.workspaces,
			moved: agentReach.moved,
			tasks: stack.tasks,
			readiness: readiness(settings, config, agents),
		}),
	);
}
