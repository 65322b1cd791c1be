import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { type AddressInfo, createServer } from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mirrorTree } from "../../src/local/agent-reach";

// The `lisa` CLI as a real child process (argv, env, exit code), as a user runs it.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/**
 * This checkout at `into` as hard links (no 1.2 GB copy), with what `npm start` needs to run there:
 * its code and packages, and with `agents` the pinned CLIs. `into` is made open to other users.
 */
export async function copyCheckout(into: string, opts: { agents?: boolean } = {}): Promise<void> {
	await mkdir(path.join(into, "agents"), { recursive: true, mode: 0o755 });
	const parts = [
		"src",
		"node_modules",
		"package.json",
		...(opts.agents ? ["agents/node_modules"] : []),
	];
	for (const part of parts) await mirrorTree(path.join(ROOT, part), path.join(into, part));
}

/** `node --import tsx src/cli/main.ts <args>` from the repository, stdout and stderr piped. */
export function spawnLisa(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT) {
	return spawn(process.execPath, ["--import", TSX, path.join(ROOT, "src/cli/main.ts"), ...args], {
		cwd,
		env,
		stdio: ["ignore", "pipe", "pipe"],
	});
}

export interface CliResult {
	code: number | null;
	/** stdout and stderr, interleaved as they arrived. */
	out: string;
	stdout: string;
	stderr: string;
}

export function lisa(
	args: string[],
	env: NodeJS.ProcessEnv,
	opts: { cwd?: string } = {},
): Promise<CliResult> {
	return finished(spawnLisa(args, env, opts.cwd));
}

/** Any command (`npx lisa …`, `npm start`) from the repository, once it exited. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
	// npm's notice of a newer npm is not the command's output.
	const quiet = { ...env, npm_config_update_notifier: "false" };
	return finished(
		spawn(command, args, { cwd: ROOT, env: quiet, stdio: ["ignore", "pipe", "pipe"] }),
	);
}

function finished(child: ChildProcessWithoutNullStreams | ReturnType<typeof spawnLisa>) {
	return new Promise<CliResult>((resolve, reject) => {
		let out = "";
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (b: Buffer) => {
			out += b.toString();
			stdout += b.toString();
		});
		child.stderr.on("data", (b: Buffer) => {
			out += b.toString();
			stderr += b.toString();
		});
		child.once("error", reject);
		child.once("close", (code) => resolve({ code, out, stdout, stderr }));
	});
}

export async function closedPort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	await new Promise((resolve) => server.close(resolve));
	return port;
}
