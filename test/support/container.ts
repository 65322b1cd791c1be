import { describe } from "vitest";
import { DEFAULT_IMAGE, imageSource, sourceDigest } from "../../src/local/container/image";
import {
	type ContainerRuntime,
	findRuntime,
	imageExists,
	runtimeCall,
} from "../../src/local/container/runtime";

// The container tests run the task image `npm run image` built (LISA_IMAGE, else the default).
// `.ci/run` builds it and sets LISA_REQUIRE_IMAGE=1, so there a missing image fails every test;
// elsewhere (a newcomer's `npm test` without podman) the container tests are skipped, saying why.

export interface TaskImage {
	runtime: ContainerRuntime;
	image: string;
	/** The runtime, with its global flags. */
	call(args: string[]): Promise<string>;
}

async function find(): Promise<TaskImage | string> {
	const image = process.env.LISA_IMAGE?.trim() || DEFAULT_IMAGE;
	let runtime: ContainerRuntime;
	try {
		runtime = await findRuntime();
	} catch (err) {
		return (err as Error).message;
	}
	if (runtime.name !== "podman") return "the container launcher needs podman";
	if (!(await imageExists(runtime, image)))
		return `the image ${image} is not built (npm run image)`;
	if ((await imageSource(runtime, image)) !== (await sourceDigest()))
		return `the image ${image} was built from other code than this checkout's (npm run image)`;
	if (process.getuid?.() !== 0) return "the container launcher needs root";
	return { runtime, image, call: (args) => runtimeCall(runtime, args) };
}

const taskImage = await find();

/** `describe`, or `describe.skip` saying why when there is no image here (an error under CI). */
export function describeWithImage(name: string, body: (img: TaskImage) => void): void {
	if (typeof taskImage === "string") {
		if (process.env.LISA_REQUIRE_IMAGE)
			throw new Error(`LISA_REQUIRE_IMAGE is set, but ${taskImage}`);
		console.warn(`skipped "${name}": ${taskImage}`);
		// biome-ignore lint/suspicious/noSkippedTests: no image here; under CI (LISA_REQUIRE_IMAGE) it throws above.
		describe.skip(name, () => {});
		return;
	}
	const img = taskImage;
	describe(name, () => body(img));
}

/**
 * The container tests' agent uids: a range of their own, apart from the default pool the other
 * tests' stacks share, so the suites running side by side never wait for or touch each other's.
 */
export const CONTAINER_AGENT_UIDS = "62000-62031";
