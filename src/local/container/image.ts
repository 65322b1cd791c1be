import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
	type ContainerRuntime,
	findRuntime,
	imageExists,
	runtimeAttached,
	runtimeCall,
} from "./runtime";
import { standInBase } from "./stand-in";

// `npm run image`: builds Dockerfile.agent (docs/agent-task.md › The container) with the machine's
// container runtime, on the official base when it can be had, else on a stand-in built here.

/** The official base Dockerfile.agent names (its BASE argument's default). */
export const OFFICIAL_BASE = "docker.io/library/node:22-bookworm-slim";
/** The image the container launcher runs (LISA_IMAGE). */
export const DEFAULT_IMAGE = "localhost/lisa-agent:latest";
/** The build stage's image, kept as the next build's cache. */
const BUILD_STAGE = "localhost/lisa-agent-build-stage:latest";
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The agent CLIs an image can carry: agents/package.json › clis, which Dockerfile.agent installs from. */
export function allClis(): string[] {
	const pkg = JSON.parse(readFileSync(path.join(ROOT, "agents", "package.json"), "utf8"));
	return Object.keys((pkg as { clis: object }).clis);
}

export interface ImageOptions {
	tag?: string;
	/** The agent CLIs to install (default: all four). */
	clis?: readonly string[];
	/** A base to use instead of the official one (it must be present or pullable). */
	base?: string;
	env?: NodeJS.ProcessEnv;
	say?: (line: string) => void;
}

/**
 * The CA bundle this machine's npm trusts: given to the build's npm as a secret, so a network that
 * intercepts TLS works in the build as it does here, and nothing of it enters the image.
 */
function hostCaBundle(env: NodeJS.ProcessEnv): string | undefined {
	return [
		env.NPM_CONFIG_CAFILE,
		env.npm_config_cafile,
		env.NODE_EXTRA_CA_CERTS,
		"/etc/ssl/certs/ca-certificates.crt",
	].find((f): f is string => !!f && existsSync(f));
}

/** The image's label holding sourceDigest() of the checkout it was built from. */
const SOURCE_LABEL = "lisa.source";

/**
 * A digest of what the image runs: the task's bundle (built in memory, as the image builds it),
 * its entrypoint, the network namespace's holder, Dockerfile.agent and the agent CLIs' pins. An image whose label differs was
 * built from other code, and runs what this checkout no longer holds.
 */
export async function sourceDigest(root = ROOT): Promise<string> {
	const dir = mkdtempSync(path.join(os.tmpdir(), "lisa-bundle-"));
	const hash = createHash("sha256");
	try {
		await new Promise<void>((resolve, reject) =>
			execFile(process.execPath, [path.join(root, "src", "task", "build.mjs"), dir], (err) =>
				err ? reject(new Error(`could not bundle the task: ${err.message}`)) : resolve(),
			),
		);
		hash.update(readFileSync(path.join(dir, "agent.mjs")));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
	for (const f of [
		"Dockerfile.agent",
		"src/task/entrypoint.sh",
		"src/task/egress/holder.mjs",
		"agents/package.json",
		"agents/package-lock.json",
		"agents/select.mjs",
	])
		hash.update(`\0${f}\0`).update(readFileSync(path.join(root, f)));
	return hash.digest("hex").slice(0, 16);
}

/** The label an image was built with (undefined: not built by `npm run image`, or absent). */
export async function imageSource(
	rt: ContainerRuntime,
	image: string,
): Promise<string | undefined> {
	const out = await runtimeCall(rt, [
		"image",
		"inspect",
		"--format",
		`{{index .Labels "${SOURCE_LABEL}"}}`,
		image,
	]).catch(() => "");
	const v = out.trim();
	return v && v !== "<no value>" ? v : undefined;
}

/** The official base when it is here or can be pulled, else the stand-in (said so). */
async function base(rt: ContainerRuntime, say: (line: string) => void): Promise<string> {
	if (await imageExists(rt, OFFICIAL_BASE)) return OFFICIAL_BASE;
	try {
		await runtimeCall(rt, ["pull", OFFICIAL_BASE], { timeoutMs: 120_000 });
		return OFFICIAL_BASE;
	} catch (err) {
		say(`${OFFICIAL_BASE} cannot be pulled (${(err as Error).message.slice(0, 200)})`);
		say("building a stand-in base instead: for trying and testing Lisa here, not for shipping");
		return standInBase(rt, say);
	}
}

export async function buildImage(
	opts: ImageOptions = {},
): Promise<{ tag: string; base: string; runtime: string }> {
	const say = opts.say ?? ((line: string) => console.error(`image: ${line}`));
	const env = opts.env ?? process.env;
	const tag = opts.tag ?? DEFAULT_IMAGE;
	const all = allClis();
	const clis = opts.clis?.length ? opts.clis : all;
	const unknown = clis.filter((c) => !all.includes(c));
	if (unknown.length)
		throw new Error(`unknown agent CLI ${unknown.join(", ")}: choose from ${all.join(", ")}`);
	const rt = await findRuntime(env.PATH);
	const from = opts.base ?? (await base(rt, say));
	const ca = hostCaBundle(env);
	say(`building ${tag} with ${rt.name} on ${from}, agent CLIs: ${clis.join(" ")}`);
	const args = [
		"build",
		...rt.limits,
		...(rt.name === "podman" ? ["--pull=never"] : []),
		"-f",
		path.join(ROOT, "Dockerfile.agent"),
		// The host's network for the build's RUN steps: no bridge, firewall or DNS of podman's needed.
		"--network",
		"host",
		"--build-arg",
		`BASE=${from}`,
		"--build-arg",
		`AGENT_CLIS=${clis.join(" ")}`,
		// What it was built from: a launch from a checkout whose code differs says so.
		"--label",
		`${SOURCE_LABEL}=${await sourceDigest()}`,
		...(ca ? ["--secret", `id=npm-ca,src=${ca}`] : []),
	];
	const code = await runtimeAttached(rt, [...args, "-t", tag, ROOT]);
	if (code !== 0) throw new Error(`${rt.name} build exited with ${code}`);
	// The build stage (about 0.9 GB) under a tag of its own, all cached by now: the next build starts
	// from its layers, and the stages and images that earlier builds left untagged can go.
	await runtimeAttached(rt, [...args, "--quiet", "--target", "build", "-t", BUILD_STAGE, ROOT]);
	for (const label of ["lisa.stage=build", SOURCE_LABEL])
		await runtimeCall(rt, ["image", "prune", "--force", "--filter", `label=${label}`]).catch(
			(err: Error) => say(`could not prune old images: ${err.message}`),
		);
	return { tag, base: from, runtime: rt.name };
}
