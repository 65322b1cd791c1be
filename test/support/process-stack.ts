import type { ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { spawnLisa } from "./cli";

export interface StackProcess {
	url: string;
	token: string;
	child: ChildProcess;
	output(): string;
	/** SIGKILL: no shutdown handler runs, like a crash or a power cut. */
	kill(): Promise<void>;
	stop(): Promise<void>;
}

/** `lisa start` (what `npm start` runs) as a real separate process. */
export async function startStackProcess(env: NodeJS.ProcessEnv): Promise<StackProcess> {
	const child = spawnLisa(["start"], env);
	let out = "";
	child.stdout?.on("data", (b: Buffer) => {
		out += b.toString();
	});
	child.stderr?.on("data", (b: Buffer) => {
		out += b.toString();
	});
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	const deadline = Date.now() + 30_000;
	let url: string | undefined;
	while (!url && Date.now() < deadline) {
		url = out.match(/Lisa is up at (http:\/\/\S+)/)?.[1];
		if (child.exitCode !== null) throw new Error(`lisa start exited early:\n${out}`);
		if (!url) await new Promise((r) => setTimeout(r, 100));
	}
	if (!url) throw new Error(`lisa start did not come up:\n${out}`);
	const token = (
		await readFile(path.join(env.LISA_DATA_DIR as string, "api-token"), "utf8")
	).trim();
	const readToken = (
		await readFile(path.join(env.LISA_DATA_DIR as string, "read-token"), "utf8")
	).trim();
	// The banner names the tokens it generated (issue 2: URL, API token and webhook URLs).
	if (
		!out.includes(`API token:     ${token}`) ||
		!out.includes(`read token:    ${readToken}`) ||
		!out.includes("/webhooks/linear")
	)
		throw new Error(`the banner does not show the tokens and webhook URLs:\n${out}`);
	return {
		url,
		token,
		child,
		output: () => out,
		async kill() {
			child.kill("SIGKILL");
			await exited;
		},
		async stop() {
			if (child.exitCode === null) child.kill("SIGTERM");
			await exited;
		},
	};
}
