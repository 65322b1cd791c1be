import { execFile } from "node:child_process";
import { copyFile, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { takeGithubToken } from "./token";

const exec = promisify(execFile);
const TOKEN = "ghs_entrypointtest0123456789abcdefgh";
let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-token-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the code host token", () => {
	it("is taken from GITHUB_TOKEN and leaves the environment", () => {
		const env: NodeJS.ProcessEnv = { GITHUB_TOKEN: TOKEN, PATH: "/bin" };
		expect(takeGithubToken(env)).toBe(TOKEN);
		expect(env).toEqual({ PATH: "/bin" });
		expect(takeGithubToken({})).toBeUndefined();
	});

	it("is read from a file descriptor, which is closed afterwards", async () => {
		const file = path.join(dir, "token");
		await writeFile(file, `${TOKEN}\n`);
		const handle = await open(file, "r");
		const env: NodeJS.ProcessEnv = { LISA_GITHUB_TOKEN_FD: String(handle.fd) };
		expect(takeGithubToken(env)).toBe(TOKEN);
		expect(env).toEqual({});
		await expect(handle.stat()).rejects.toThrow(/EBADF/);
	});

	it("reaches the task through the container entrypoint on fd 3, not in any environment", async () => {
		await copyFile(new URL("./entrypoint.sh", import.meta.url), path.join(dir, "entrypoint.sh"));
		// Stands in for the task bundle: reports what it can see of the token.
		await writeFile(
			path.join(dir, "agent.mjs"),
			`import { readFileSync, closeSync } from "node:fs";
const fd = Number(process.env.LISA_GITHUB_TOKEN_FD);
const token = readFileSync(fd, "utf8").trim();
closeSync(fd);
console.log(JSON.stringify({
	token,
	env: process.env.GITHUB_TOKEN ?? null,
	environ: readFileSync("/proc/self/environ", "utf8").includes(token),
}));`,
		);
		const { stdout } = await exec("sh", [path.join(dir, "entrypoint.sh")], {
			env: { PATH: process.env.PATH, GITHUB_TOKEN: TOKEN },
		});
		expect(JSON.parse(stdout)).toEqual({ token: TOKEN, env: null, environ: false });
	});
});
