import { ECSClient } from "@aws-sdk/client-ecs";
import type { ApiDeps } from "./http/deps";
import { EcsLauncher } from "./launcher/ecs";
import type { Launcher } from "./launcher/launcher";
import type { PipelineDeps } from "./pipeline/deps";
import { createDeps } from "./runtime";
import { readSettings } from "./settings";

// Wiring for the Lambda entry points: built once per container, on first use.

let deps: (PipelineDeps & ApiDeps) | undefined;

/** Without ECS settings every launch fails with this reason, visible on the run. */
function unconfiguredLauncher(): Launcher {
	const fail = async (): Promise<never> => {
		throw new Error("ECS is not configured: set LISA_ECS_CLUSTER and LISA_ECS_TASK_DEFINITION");
	};
	return { launch: fail, stop: fail, isAlive: async () => undefined };
}

export function lambdaDeps(): PipelineDeps & ApiDeps {
	if (!deps) {
		const settings = readSettings();
		const launcher = settings.ecs
			? new EcsLauncher(new ECSClient({ region: settings.region }), settings.ecs, settings)
			: unconfiguredLauncher();
		deps = createDeps(settings, { launcher });
	}
	return deps;
}
