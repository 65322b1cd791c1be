import { ECSClient } from "@aws-sdk/client-ecs";
import { readSettings } from "../config/settings";
import { EcsLauncher } from "../launcher/ecs";
import type { Launcher } from "../launcher/launcher";
import { createDeps, type RuntimeDeps } from "./deps";
import { lambdaLogger } from "./lambda";

// The handlers' wiring on Lambda (intake, events, ECS events, sweeper): ./lambda.ts plus the ECS
// launcher and the tracker clients. Built on the first invocation and kept for the container's life.

let deps: RuntimeDeps | undefined;

/** Without the agent task linked every launch fails with this reason, visible on the run. */
function unconfiguredLauncher(): Launcher {
	const fail = async (): Promise<never> => {
		throw new Error(
			"ECS is not configured: link the Agent task (infra/agent.ts) or set LISA_ECS_CLUSTER and LISA_ECS_TASK_DEFINITION",
		);
	};
	return { launch: fail, stop: fail, inspect: async () => ({}) };
}

export function lambdaDeps(): RuntimeDeps {
	if (!deps) {
		const settings = readSettings();
		const launcher = settings.ecs
			? new EcsLauncher(new ECSClient({ region: settings.region }), settings.ecs, settings)
			: unconfiguredLauncher();
		deps = createDeps(settings, { launcher, log: lambdaLogger() });
	}
	return deps;
}
