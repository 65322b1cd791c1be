import { statSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { StepFailure } from "./failure";
import { runProcess } from "./process";

// The agent's own user (DESIGN §9, README › The container). A process can read the environment and
// memory of every process of its own uid (/proc/<pid>/environ), so everything an agent can influence
// — the agent CLI, the built-in agent's commands, setup and validate, git in the workspace — runs
// as this user, while the task and the git commands that carry the token stay root.

export interface AgentUser {
	uid: number;
	gid: number;
	home: string;
}

const id = (name: string, v: string): number => {
	const n = Number(v);
	if (!/^\d+$/.test(v) || n === 0 || n > 2 ** 32 - 2)
		throw new StepFailure(`${name} must be a non-root numeric id, not "${v}"`, false, "config");
	return n;
};

/**
 * `LISA_AGENT_UID`, `LISA_AGENT_GID`, `LISA_AGENT_HOME` (all or none). Without them the agent runs
 * as the task's user, as `npm start` does. With them the task must be root: only root can start
 * processes as another user.
 */
export function agentUser(
	env: NodeJS.ProcessEnv,
	taskUid = process.getuid?.(),
): AgentUser | undefined {
	const { LISA_AGENT_UID: uid, LISA_AGENT_GID: gid, LISA_AGENT_HOME: home } = env;
	if (!uid && !gid && !home) return undefined;
	if (!uid || !gid || !home)
		throw new StepFailure(
			"LISA_AGENT_UID, LISA_AGENT_GID and LISA_AGENT_HOME go together: set all three or none",
			false,
			"config",
		);
	const user = { uid: id("LISA_AGENT_UID", uid), gid: id("LISA_AGENT_GID", gid), home };
	if (taskUid !== 0)
		throw new StepFailure(
			`LISA_AGENT_UID is set, so the task must run as root to start the agent as uid ${user.uid}; it runs as uid ${taskUid ?? "unknown"}`,
			false,
			"config",
		);
	if (!path.isAbsolute(home) || !statSync(home, { throwIfNoEntry: false })?.isDirectory())
		throw new StepFailure(
			`LISA_AGENT_HOME "${home}" is not an existing directory`,
			false,
			"config",
		);
	return user;
}

/**
 * Gives a workspace Lisa prepared to the agent's user: `chown -R` without following symbolic links
 * (a repository may contain links to anywhere).
 */
export async function handOver(paths: readonly string[], user: AgentUser): Promise<void> {
	const r = await runProcess(
		"chown",
		["-R", "-h", "-P", `${user.uid}:${user.gid}`, "--", ...paths],
		{
			cwd: "/",
			env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
			timeoutMs: 10 * 60_000,
		},
	);
	if (r.code !== 0)
		throw new Error(
			`could not hand the workspace to uid ${user.uid}: ${r.error ?? r.output.trim()}`,
		);
}

/** Live processes (not zombies) any of whose uids is `uid`, except this one. */
async function processesOf(uid: number): Promise<number[]> {
	const pids: number[] = [];
	for (const name of await readdir("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid === process.pid) continue;
		const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
		const uids =
			status
				.match(/^Uid:\s+(.*)$/m)?.[1]
				?.split(/\s+/)
				.map(Number) ?? [];
		if (uids.includes(uid) && !/^State:\s+Z/m.test(status)) pids.push(pid);
	}
	return pids;
}

/**
 * Kills every process of the agent's user (found by uid in /proc, never by name): what an agent
 * left running — a `setsid` watcher survives its process group — must not be alive while the task
 * pushes. Repeats until a scan finds none, so a process forking meanwhile goes too. The pids killed.
 */
export async function stopAgentProcesses(user: AgentUser): Promise<number[]> {
	if (user.uid === process.getuid?.()) throw new Error("refusing to kill the task's own user");
	const killed = new Set<number>();
	for (let round = 0; round < 50; round++) {
		const pids = await processesOf(user.uid);
		if (!pids.length) return [...killed];
		for (const pid of pids)
			try {
				process.kill(pid, "SIGKILL");
				killed.add(pid);
			} catch {}
		await new Promise((r) => setTimeout(r, 20));
	}
	throw new Error(`processes of uid ${user.uid} kept appearing after 50 rounds of killing them`);
}
