import { chmod, copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const FAKE = fileURLToPath(new URL("./fake-agent.mjs", import.meta.url));
const AGENT_CLIS = ["claude", "gemini", "opencode", "codex"] as const;

interface FakeAgentCall {
	cli: string;
	/** "plan" for a planning prompt, else the repository the prompt names. */
	target: string | null;
	argv: string[];
	model?: string;
	cwd: string;
	pid: number;
	/** The prompt the agent worked from (read from the file a long prompt points to). */
	prompt: string;
	promptFile: string | null;
	/** It read the prompt from stdin (no prompt argument). */
	promptOnStdin: boolean;
	env: string[];
	envValues: Record<string, string>;
	claudecode: string | null;
	uid: number;
	gid: number;
	/** Who owned its directory, `..`, `../repo`, their entries and `repos/*` (lstat: links themselves). */
	owners: Record<string, number>;
	/** A planning call's checkouts as it found them: HEAD and `git status --porcelain`. */
	checkouts?: Record<string, { head: string; status: string }>;
	/** When it started (ISO). */
	at: string;
}

/** A watcher left running (`leave-running`): its uid, the directory it was left in (the step's). */
interface Watcher {
	pid: number;
	uid: number;
	cwd: string;
	found: FoundSecret[];
}

/** A secret-looking variable a fake agent read in some process's environment. */
interface FoundSecret {
	pid: number;
	uid: number | null;
	name: string;
	value: string;
}

/** What `scan-secrets` saw. */
interface SecretScan {
	uid: number;
	/** Every /proc/<pid>/environ it could read (absent with `scan-secrets=ancestors`). */
	found?: FoundSecret[];
	readable?: number;
	denied?: number;
	/** Its parent, grandparent…: whether their environment was readable, and what was in it. */
	ancestors: { pid: number; uid: number | null; readable: boolean; found: FoundSecret[] }[];
}

/** One way out a `reach` directive tried, and what it came to (`connected`, `status 403: …`, an error code). */
interface Reach {
	tcp?: string;
	dns?: string;
	proxy?: string;
	ok: boolean;
	outcome: string;
}

export interface FakeAgents {
	/** Put first on PATH. */
	bin: string;
	log: string;
	calls(): Promise<FakeAgentCall[]>;
	/** The calls made in the workspaces of `runId` (its steps' directories name it). */
	callsOf(runId: string): Promise<FakeAgentCall[]>;
	/** Agents that hung, with the pid of the child each started. */
	hangs(): Promise<{ cli: string; hang: { pid: number; child: number } }[]>;
	scans(): Promise<SecretScan[]>;
	/** Who ran each `--version` probe. */
	versions(): Promise<{ cli: string; uid: number; gid: number }[]>;

	/** Watchers left running (`leave-running`), and the secrets each found while it ran. */
	watchers(): Promise<Watcher[]>;
	/** What each `call-model` request got back. */
	modelCalls(): Promise<{ model: string; path: string; status: number; body: string }[]>;
	/** What each `reach` way out came to, per agent call. */
	reaches(): Promise<Reach[][]>;
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
	// Writable by an agent running as another user (LISA_AGENT_UID).
	await writeFile(log, "", { flag: "a" });
	await chmod(log, 0o666);
	// A copy beside the wrappers: an agent's own user may not reach the checkout (cloned into
	// /root or a 0700 directory), only this directory, which the worlds open to it.
	const fake = path.join(bin, "fake-agent.mjs");
	await copyFile(FAKE, fake);
	await chmod(fake, 0o644);
	for (const cli of clis) {
		const file = path.join(bin, cli);
		await writeFile(
			file,
			`#!/bin/sh\nFAKE_AGENT_LOG='${log}' exec '${process.execPath}' '${fake}' ${cli} "$@"\n`,
		);
		await chmod(file, 0o755);
	}
	const entries = async () =>
		(await readFile(log, "utf8").catch(() => ""))
			.split("\n")
			.filter(Boolean)
			.map((l) => JSON.parse(l) as Record<string, unknown>);
	const calls = async () =>
		(await entries()).filter((e) => "argv" in e) as unknown as FakeAgentCall[];
	return {
		bin,
		log,
		calls,
		callsOf: async (runId) => (await calls()).filter((c) => c.cwd.includes(runId)),
		hangs: async () =>
			(await entries()).filter((e) => "hang" in e) as unknown as Awaited<
				ReturnType<FakeAgents["hangs"]>
			>,
		scans: async () => (await entries()).flatMap((e) => (e.scan ? [e.scan as SecretScan] : [])),

		versions: async () =>
			(await entries()).flatMap((e) =>
				e.version ? [{ cli: e.cli as string, ...(e.version as { uid: number; gid: number }) }] : [],
			),
		reaches: async () => (await entries()).flatMap((e) => (e.reach ? [e.reach as Reach[]] : [])),
		modelCalls: async () =>
			(await entries()).flatMap((e) =>
				e.modelCall
					? [e.modelCall as { model: string; path: string; status: number; body: string }]
					: [],
			),
		async watchers() {
			const byPid = new Map<number, Watcher>();
			for (const e of await entries()) {
				const w = e.watcher as (Partial<Watcher> & { pid: number }) | undefined;
				if (!w) continue;
				const entry = byPid.get(w.pid) ?? { pid: w.pid, uid: w.uid ?? -1, cwd: "", found: [] };
				if (w.uid !== undefined) entry.uid = w.uid;
				if (w.cwd !== undefined) entry.cwd = w.cwd;
				entry.found.push(...(w.found ?? []));
				byPid.set(w.pid, entry);
			}
			return [...byPid.values()];
		},
	};
}
