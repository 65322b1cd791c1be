import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);
let out: string;
beforeAll(async () => {
	out = await mkdtemp(path.join(os.tmpdir(), "lisa-bundle-"));
});
afterAll(() => rm(out, { recursive: true, force: true }));

describe("the container's task bundle", () => {
	it("builds as Dockerfile.agent builds it and starts under the entrypoint", async () => {
		const build = fileURLToPath(new URL("./build.mjs", import.meta.url));
		const { stdout } = await exec(process.execPath, [build, out]);
		const bundle = stdout.trim();
		expect(bundle).toBe(path.join(out, "agent.mjs"));
		expect((await stat(bundle)).size).toBeGreaterThan(100_000);
		await copyFile(new URL("./entrypoint.sh", import.meta.url), path.join(out, "entrypoint.sh"));
		// Without its step the task stops at once, saying what is missing (and not the token).
		const run = exec("sh", [path.join(out, "entrypoint.sh")], {
			env: {
				PATH: process.env.PATH,
				GITHUB_TOKEN: "ghp_bundletest0123456789abcdefghijkl",
				LOG_LEVEL: "info",
			},
		});
		const err = await run.then(
			() => undefined,
			(e: { code: number; stdout: string }) => e,
		);
		expect(err?.code).toBe(1);
		const line = JSON.parse(err?.stdout.trim().split("\n").at(-1) ?? "{}");
		expect(line).toMatchObject({
			msg: "agent task crashed",
			err: { message: "LISA_RUN_ID is not set" },
		});
	});
});
