import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { agentTaskSize } from "../../config/links";
import type { Settings } from "../../config/settings";
import type { Logger } from "../../log";
import { AgentUidPool, type UidRange } from "../agent-users";
import { StartRefused } from "../claims";
import { DEFAULT_IMAGE, imageSource, sourceDigest } from "./image";
import { ContainerLauncher, type TaskSize } from "./launcher";
import { findRuntime, imageExists, runtimeCall } from "./runtime";

/**
 * The AWS deploy's task size (docs/deploying.md › Deploy): the same variables, defaults and checks.
 */
export function taskSize(env: NodeJS.ProcessEnv): TaskSize {
	let size: ReturnType<typeof agentTaskSize>;
	try {
		size = agentTaskSize(env);
	} catch (err) {
		throw new StartRefused((err as Error).message);
	}
	return {
		vcpu: Number.parseFloat(size.cpu),
		memoryMiB: Math.round(Number.parseFloat(size.memory) * 1024),
	};
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
	const imageEnv = await runtimeCall(runtime, [
		"image",
		"inspect",
		"--format",
		"{{range .Config.Env}}{{println .}}{{end}}",
		image,
	]);
	const clis =
		imageEnv
			.split("\n")
			.find((l) => l.startsWith("LISA_AGENT_CLIS="))
			?.slice("LISA_AGENT_CLIS=".length)
			.split(/\s+/)
			.filter(Boolean) ?? [];
	if (built !== (await sourceDigest()))
		log.warn(
			{ image },
			"the task image was built from other code than this checkout's: run `npm run image` to run this code in containers",
		);
	const stack = stackLabel(settings.dataDir);
	return new ContainerLauncher(settings, env, log, {
		runtime,
		image,
		clis,
		uids: new AgentUidPool(uids),
		size: taskSize(env),
		pidsLimit: 4096,
		stack,
	});
}
