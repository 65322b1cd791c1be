import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const FAKE = fileURLToPath(new URL("./fake-agent.mjs", import.meta.url));
export const AGENT_CLIS = ["claude", "gemini", "opencode", "codex"] as const;

export interface FakeAgents {
	/** Put first on PATH. */
	bin: string;
	log: string;
	calls(): Promise<
		{
			cli: string;
			argv: string[];
			model?: string;
			cwd: string;
			env: string[];
			claudecode: string | null;
		}[]
	>;
}

/**
 * Writes `claude`, `gemini`, … wrappers into `dir/bin` that run the fake agent. The wrapper sets
 * the call log path itself, so the agent's reduced environment does not matter.
 */
export async function installFakeAgents(
	dir: string,
	clis: readonly string[] = AGENT_CLIS,
): Promise<FakeAgents> {
	const bin = path.join(dir, "bin");
	const log = path.join(dir, "calls.jsonl");
	await mkdir(bin, { recursive: true });
	for (const cli of clis) {
		const file = path.join(bin, cli);
		await writeFile(
			file,
			`#!/bin/sh\nFAKE_AGENT_LOG='${log}' exec '${process.execPath}' '${FAKE}' ${cli} "$@"\n`,
		);
		await chmod(file, 0o755);
	}
	return {
		bin,
		log,
		async calls() {
			const text = await readFile(log, "utf8").catch(() => "");
			return text
				.split("\n")
				.filter(Boolean)
				.map((l) => JSON.parse(l));
		},
	};
}
