import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_CLI_BIN, AGENT_CLI_PATH } from "../../test/support/agent-cli";

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

	it("checks in the image that each installed CLI still takes Lisa's flags (check-clis)", async () => {
		const bundle = path.join(out, "agent.mjs");
		const checked = await exec(process.execPath, [bundle, "check-clis"], {
			env: { PATH: AGENT_CLI_PATH },
		});
		expect(checked.stdout.split("\n").filter((l) => l.startsWith("ok "))).toHaveLength(4);

		// A codex whose help lacks a flag Lisa passes: the build fails, naming it.
		const bin = path.join(out, "bin");
		await mkdir(bin);
		const real = path.join(AGENT_CLI_BIN, "codex");
		await writeFile(
			path.join(bin, "codex"),
			`#!/bin/sh\n"${real}" "$@" | sed 's/--strict-config/--lenient-config/'\n`,
			{ mode: 0o755 },
		);
		const failed = await exec(process.execPath, [bundle, "check-clis"], {
			env: { PATH: `${bin}:${AGENT_CLI_PATH}` },
		}).then(
			() => undefined,
			(e: { code: number; stdout: string }) => e,
		);
		expect(failed?.code).toBe(1);
		expect(failed?.stdout).toMatch(
			/^FAIL codex codex-cli [\d.]+: no longer accepts --strict-config$/m,
		);
	}, 180_000);
});
