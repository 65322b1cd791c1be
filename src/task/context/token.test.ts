import { execFile } from "node:child_process";
import { copyFile, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { takeGithubToken } from "./token";

const exec = promisify(execFile);
const TOKEN = "ghs_entrypointtest0123456789abcdefgh";
const KEY = "sk-ant-entrypoint-0123456789abcdefgh";
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

	it("comes with the other secrets from a file descriptor, which is closed afterwards", async () => {
		const file = path.join(dir, "secrets.json");
		await writeFile(file, `${JSON.stringify({ GITHUB_TOKEN: TOKEN, ANTHROPIC_API_KEY: KEY })}\n`);
		const handle = await open(file, "r");
		const env: NodeJS.ProcessEnv = { LISA_SECRETS_FD: String(handle.fd), PATH: "/bin" };
		expect(takeGithubToken(env)).toBe(TOKEN);
		expect(env).toEqual({ ANTHROPIC_API_KEY: KEY, PATH: "/bin" });
		await expect(handle.stat()).rejects.toThrow(/EBADF/);
	});

	it("reach the task through the container entrypoint on fd 3, in no process's initial environment", async () => {
		await copyFile(new URL("../entrypoint.sh", import.meta.url), path.join(dir, "entrypoint.sh"));
		// Stands in for the task bundle: reports what it received and what its environ shows.
		await writeFile(
			path.join(dir, "agent.mjs"),
			`import { readFileSync, closeSync } from "node:fs";
const fd = Number(process.env.LISA_SECRETS_FD);
const secrets = JSON.parse(readFileSync(fd, "utf8"));
closeSync(fd);
console.log(JSON.stringify({
	secrets,
	env: Object.keys(process.env).filter((k) => k !== "PWD").sort(),
	environ: readFileSync("/proc/self/environ", "utf8").split("\\0").filter((e) => e && !e.startsWith("PWD=")).sort(),
}));`,
		);
		const secrets = {
			GITHUB_TOKEN: TOKEN,
			ANTHROPIC_API_KEY: KEY,
			AWS_SECRET_ACCESS_KEY: "aws/secret with spaces, 'quotes' and \"$(echo no)\"",
			AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: "/v2/credentials/0c2d-4e3f",
			LISA_LLM_API_KEY: "multi\nline\nkey",
		};
		const { stdout } = await exec("sh", [path.join(dir, "entrypoint.sh")], {
			env: { PATH: process.env.PATH, LISA_RUN_ID: "RUN1", ...secrets },
		});
		const seen = JSON.parse(stdout);
		expect(seen.secrets).toEqual(secrets);
		expect(seen.env).toEqual(["LISA_RUN_ID", "LISA_SECRETS_FD", "PATH"]);
		expect(seen.environ).toEqual([
			"LISA_RUN_ID=RUN1",
			"LISA_SECRETS_FD=3",
			`PATH=${process.env.PATH}`,
		]);
	});

	it("reach it from the file LISA_SECRETS_FILE names (the container launcher's), alone or with variables", async () => {
		const file = path.join(dir, "mounted.json");
		const given = { GITHUB_TOKEN: TOKEN, LISA_LOCAL_AWS_KEY: "LISA0123456789", LISA_REPOS: "[]" };
		await writeFile(file, JSON.stringify(given));
		const base = { PATH: process.env.PATH, LISA_RUN_ID: "RUN1", LISA_SECRETS_FILE: file };
		const environ = ["LISA_RUN_ID=RUN1", "LISA_SECRETS_FD=3", `PATH=${process.env.PATH}`];
		const alone = JSON.parse(
			(await exec("sh", [path.join(dir, "entrypoint.sh")], { env: base })).stdout,
		);
		expect(alone.secrets).toEqual(given);
		expect(alone.environ).toEqual(environ);
		const both = JSON.parse(
			(
				await exec("sh", [path.join(dir, "entrypoint.sh")], {
					env: { ...base, ANTHROPIC_API_KEY: KEY },
				})
			).stdout,
		);
		expect(both.secrets).toEqual({ ...given, ANTHROPIC_API_KEY: KEY });
		expect(both.environ).toEqual(environ);
	});

	it("the entrypoint starts the task plainly when there is no secret", async () => {
		await copyFile(new URL("../entrypoint.sh", import.meta.url), path.join(dir, "entrypoint.sh"));
		await writeFile(
			path.join(dir, "agent.mjs"),
			'console.log(JSON.stringify(Object.keys(process.env).filter((k) => k !== "PWD").sort()));',
		);
		const { stdout } = await exec("sh", [path.join(dir, "entrypoint.sh")], {
			env: { PATH: process.env.PATH, LISA_RUN_ID: "RUN1" },
		});
		expect(JSON.parse(stdout)).toEqual(["LISA_RUN_ID", "PATH"]);
	});
});
