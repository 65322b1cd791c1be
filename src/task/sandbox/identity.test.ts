import { execFileSync } from "node:child_process";
import { link, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskWorld, type TaskWorld } from "../../../test/support/task";
import { readAgentFile } from "./files";
import { agentUser } from "./identity";

// The agent's own user from the task's environment, and how the task reads what the agent wrote.
// (The uid switches themselves are in isolation.test.ts, which needs root.)

let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-identity-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the agent's user", () => {
	const env = (over: Record<string, string | undefined> = {}) => ({
		LISA_AGENT_UID: "10001",
		LISA_AGENT_GID: "10002",
		LISA_AGENT_HOME: dir,
		...over,
	});

	const fresh = "/work/attempt/home";

	it("is none without LISA_AGENT_*, so the agent runs as the task's user", () => {
		expect(agentUser({}, fresh, 1000)).toBeUndefined();
	});

	it("is read when the task is root", () => {
		expect(agentUser(env(), fresh, 0)).toEqual({ uid: 10001, gid: 10002, home: dir });
	});

	it("gets a fresh home of the attempt's without LISA_AGENT_HOME", () => {
		expect(agentUser(env({ LISA_AGENT_HOME: undefined }), fresh, 0)).toEqual({
			uid: 10001,
			gid: 10002,
			home: fresh,
		});
	});

	it("needs the task to be root, and says so", () => {
		expect(() => agentUser(env(), fresh, 1000)).toThrow(
			"LISA_AGENT_UID is set, so the task must run as root to start the agent as uid 10001; it runs as uid 1000",
		);
	});

	it.each([
		[{ LISA_AGENT_GID: undefined }, /go together: set both/],
		[{ LISA_AGENT_UID: undefined, LISA_AGENT_GID: undefined }, /go together: set both/],
		[{ LISA_AGENT_UID: "0" }, /LISA_AGENT_UID must be a non-root numeric id, not "0"/],
		[{ LISA_AGENT_GID: "agent" }, /LISA_AGENT_GID must be a non-root numeric id/],
		[{ LISA_AGENT_HOME: "/nonexistent/lisa-agent-home" }, /is not an existing directory/],
		[{ LISA_AGENT_HOME: "relative/home" }, /is not an existing directory/],
	])("refuses %o", (over, error) => {
		expect(() => agentUser(env(over), fresh, 0)).toThrow(error);
	});

	it("set wrongly, fails the step with the reason instead of running the agent as the task", async () => {
		const w: TaskWorld = await createTaskWorld();
		try {
			const runId = await w.newRun({ title: "Misconfigured container" });
			const report = await w.runTask(runId, {
				LISA_AGENT_UID: "10001",
				LISA_AGENT_GID: "10001",
				LISA_AGENT_HOME: path.join(dir, "missing"),
			});
			expect(report).toMatchObject({ outcome: "failed", transient: false });
			expect(report?.error).toMatch(/LISA_AGENT_/);
			expect(await w.agents.calls()).toEqual([]);
		} finally {
			await w.stop();
		}
	});
});

describe("reading a file the agent wrote", () => {
	it("reads a plain file", async () => {
		const file = path.join(dir, "plain.json");
		await writeFile(file, '{"ok":true}');
		expect(await readAgentFile(file, 100)).toBe('{"ok":true}');
	});

	it("never through a symbolic link, a second name, a FIFO, or past its limit", async () => {
		const secret = path.join(dir, "secret.txt");
		await writeFile(secret, "only the task may read this", { mode: 0o600 });
		await symlink(secret, path.join(dir, "via-symlink"));
		await expect(readAgentFile(path.join(dir, "via-symlink"), 100)).rejects.toMatchObject({
			code: "ELOOP",
		});
		await link(secret, path.join(dir, "via-hardlink"));
		await expect(readAgentFile(path.join(dir, "via-hardlink"), 100)).rejects.toThrow(
			"it has other names (a hard link)",
		);
		execFileSync("mkfifo", [path.join(dir, "fifo")]);
		await expect(readAgentFile(path.join(dir, "fifo"), 100)).rejects.toThrow(
			"it is not a regular file",
		);
		await writeFile(path.join(dir, "big"), "x".repeat(101));
		await expect(readAgentFile(path.join(dir, "big"), 100)).rejects.toThrow(
			"it is larger than 100 bytes",
		);
	});
});
