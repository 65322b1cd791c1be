import { statSync } from "node:fs";
import { chmod, chown, mkdir } from "node:fs/promises";
import path from "node:path";
import { StepFailure } from "../report/failure";
import { type AgentUser, runProcess } from "./process";
import { killAll, processesWithVariable, stopUid } from "./processes";

// The agent's own user (docs/security.md › Security). A process can read the environment and memory
// of every process of its own uid (/proc/<pid>/environ), so everything an agent can influence — the
// agent CLI, the built-in agent's commands, setup and validate, git in the workspace — runs as
// this user, while the task and the git commands that carry the token stay root.

/** The variable that marks every process Lisa starts for an attempt's agent (see `AgentScope`). */
export const AGENT_MARK = "LISA_AGENT_MARK";

/**
 * Which processes are an attempt's: those of its agent user — exact, since a uid serves one step
 * at a time — or, without one, those whose environment carries the attempt's mark (best effort:
 * a process of the same user can drop the mark;
 * docs/security.md › `npm start` as another user (or `LISA_AGENT_UIDS=off`) says what that mode
 * risks).
 */
export interface AgentScope {
	user?: AgentUser;
	mark: string;
}

const id = (name: string, v: string): number => {
	const n = Number(v);
	if (!/^\d+$/.test(v) || n === 0 || n > 2 ** 32 - 2)
		throw new StepFailure(`${name} must be a non-root numeric id, not "${v}"`, false, "config");
	return n;
};

/**
 * `LISA_AGENT_UID` and `LISA_AGENT_GID` (both or none), and `LISA_AGENT_HOME`. Without them the
 * agent runs as the task's user. Without a home the agent gets `freshHome`, made empty for this
 * attempt, so nothing an earlier agent of the same uid left in its home reaches this one. With an
 * agent user the task must be root: only root can start processes as another user.
 */
export function agentUser(
	env: NodeJS.ProcessEnv,
	freshHome: string,
	taskUid = process.getuid?.(),
): AgentUser | undefined {
	const { LISA_AGENT_UID: uid, LISA_AGENT_GID: gid, LISA_AGENT_HOME: home } = env;
	if (!uid && !gid && !home) return undefined;
	if (!uid || !gid)
		throw new StepFailure(
			"LISA_AGENT_UID and LISA_AGENT_GID go together: set both (and optionally LISA_AGENT_HOME) or none",
			false,
			"config",
		);
	const user = {
		uid: id("LISA_AGENT_UID", uid),
		gid: id("LISA_AGENT_GID", gid),
		home: home || freshHome,
	};
	if (taskUid !== 0)
		throw new StepFailure(
			`LISA_AGENT_UID is set, so the task must run as root to start the agent as uid ${user.uid}; it runs as uid ${taskUid ?? "unknown"}`,
			false,
			"config",
		);
	if (home && (!path.isAbsolute(home) || !statSync(home, { throwIfNoEntry: false })?.isDirectory()))
		throw new StepFailure(
			`LISA_AGENT_HOME "${home}" is not an existing directory`,
			false,
			"config",
		);
	return user;
}

/** Makes the agent's fresh home (when it has no home of its own) and gives it to the agent. */
export async function prepareHome(user: AgentUser, freshHome: string): Promise<void> {
	if (user.home !== freshHome) return;
	await mkdir(freshHome, { mode: 0o700 });
	await chown(freshHome, user.uid, user.gid);
}

/**
 * Gives a workspace Lisa prepared to the agent's user: `chown -R` without following symbolic links
 * (a repository may contain links to anywhere), and each folder closed to other users (another
 * step's agent has a uid of its own).
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
	for (const p of paths) await chmod(p, 0o700);
}

/**
 * Kills every process of the attempt's agent: what an agent left running — a `setsid` watcher,
 * a process forking away from every kill — must not be alive while the task pushes. With an
 * agent user, the kernel vouches that none is left (`stopUid`); the pids seen, for the record.
 */
export function stopAgentProcesses(scope: AgentScope): Promise<number[]> {
	const { user, mark } = scope;
	return user
		? stopUid(user.uid, user.gid)
		: killAll(() => processesWithVariable(AGENT_MARK, mark), "the agent's processes");
}
