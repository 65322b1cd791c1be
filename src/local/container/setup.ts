import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import type { Settings } from "../../config/settings";
import type { Logger } from "../../log";
import { AgentUidPool, type UidRange } from "../agent-users";
import { StartRefused } from "../claims";
import { DEFAULT_IMAGE, imageSource, sourceDigest } from "./image";
import { ContainerLauncher, type TaskSize } from "./launcher";
import { findRuntime } from "./runtime";
import { imageExists } from "./stand-in";

/** The AWS deploy's task size (LISA_AGENT_CPU, LISA_AGENT_MEMORY, README › Deploy), its defaults too. */
export function taskSize(env: NodeJS.ProcessEnv): TaskSize {
	const vcpu = Number.parseFloat(env.LISA_AGENT_CPU?.trim() || "2 vCPU");
	const memoryGb = Number.parseFloat(env.LISA_AGENT_MEMORY?.trim() || "4 GB");
	if (!(vcpu > 0) || !(memoryGb > 0))
		throw new StartRefused(
			`LISA_AGENT_CPU and LISA_AGENT_MEMORY must look like "2 vCPU" and "4 GB" (got "${env.LISA_AGENT_CPU ?? ""}", "${env.LISA_AGENT_MEMORY ?? ""}")`,
		);
	return { vcpu, memoryMiB: Math.round(memoryGb * 1024) };
}

/** What names one stack's containers (label lisa.stack): its data dir, one stack's at a time. */
export function stackLabel(dataDir: string): string {
	return createHash("sha256").update(realpathSync(dataDir)).digest("hex").slice(0, 10);
}

/**
 * The container launcher, once everything it needs is known to be there; otherwise the start is
 * refused with one line saying what to do.
 */
export async function containerLauncher(
	settings: Settings,
	env: NodeJS.ProcessEnv,
	log: Logger,
	uids: UidRange | undefined,
): Promise<ContainerLauncher> {
	if (process.getuid?.() !== 0 || !uids)
		throw new StartRefused(
			'LISA_LAUNCHER=container runs rootful podman and gives each container\'s agent a uid of the pool: start Lisa as root with LISA_AGENT_UIDS set or unset (not "off"), or unset LISA_LAUNCHER for the child-process launcher',
		);
	const runtime = await findRuntime(env.PATH).catch((err: Error) => {
		throw new StartRefused(`LISA_LAUNCHER=container: ${err.message}`);
	});
	if (runtime.name !== "podman")
		throw new StartRefused(
			"LISA_LAUNCHER=container needs podman (apt-get install podman runc): it delivers the task's secrets as runtime secrets, which Docker has only in swarm mode",
		);
	const image = env.LISA_IMAGE?.trim() || DEFAULT_IMAGE;
	if (!(await imageExists(runtime, image)))
		throw new StartRefused(
			`LISA_LAUNCHER=container: the image ${image} is not built: run \`npm run image\``,
		);
	const built = await imageSource(runtime, image);
	if (built !== (await sourceDigest()))
		log.warn(
			{ image },
			"the task image was built from other code than this checkout's: run `npm run image` to run this code in containers",
		);
	const stack = stackLabel(settings.dataDir);
	return new ContainerLauncher(settings, env, log, {
		runtime,
		image,
		uids: new AgentUidPool(uids),
		size: taskSize(env),
		pidsLimit: 4096,
		stack,
	});
}
