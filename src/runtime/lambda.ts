import { ECSClient } from "@aws-sdk/client-ecs";
import type { ApiDeps } from "../api/deps";
import { readSettings, withLinks } from "../config/settings";
import { EcsLauncher } from "../launcher/ecs";
import type { Launcher } from "../launcher/launcher";
import { createLogger } from "../log";
import type { PipelineDeps } from "../pipeline/deps";
import { createDeps } from "./deps";

// Wiring for the Lambda entry points: built on the first invocation and kept for the container's
// life. Settings and secrets come from what infra/ links to the function (src/config/settings.ts).

let deps: (PipelineDeps & ApiDeps) | undefined;

/** Without the agent task linked every launch fails with this reason, visible on the run. */
function unconfiguredLauncher(): Launcher {
	const fail = async (): Promise<never> => {
		throw new Error(
			"ECS is not configured: link the Agent task (infra/agent.ts) or set LISA_ECS_CLUSTER and LISA_ECS_TASK_DEFINITION",
		);
	};
	return { launch: fail, stop: fail, inspect: async () => ({}) };
}

export function lambdaDeps(): PipelineDeps & ApiDeps {
	if (!deps) {
		const settings = readSettings();
		const launcher = settings.ecs
			? new EcsLauncher(new ECSClient({ region: settings.region }), settings.ecs, settings)
			: unconfiguredLauncher();
		// Linked secrets are not in process.env: give them to the logger so it redacts them.
		deps = createDeps(settings, { launcher, log: createLogger("lisa", withLinks()) });
	}
	return deps;
}

/** A handler built on its first call, so importing an entry point reads no settings. */
export function lazy<A extends unknown[], R>(build: () => (...args: A) => R): (...args: A) => R {
	let built: ((...args: A) => R) | undefined;
	return (...args) => {
		built ??= build();
		return built(...args);
	};
}
