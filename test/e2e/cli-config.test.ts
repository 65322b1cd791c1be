import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/load";
import { lisa } from "../support/cli";

// `lisa init` and `lisa config` as real processes on a config file in a temporary directory.

let dir: string;
let file: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-cli-config-"));
	file = path.join(dir, "lisa", "config.yaml");
	env = { PATH: process.env.PATH, HOME: dir, LISA_CONFIG: file };
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const loaded = () => {
	const state = loadConfig(file);
	if (state.status !== "ok") throw new Error(`config not ok: ${JSON.stringify(state)}`);
	return state.config;
};

describe("lisa init", () => {
	it("writes a commented config that loads, and refuses to overwrite it", async () => {
		const first = await lisa(["init"], env);
		expect(first.code).toBe(0);
		expect(first.stdout).toContain(`wrote ${file} (source: linear)`);
		const text = await readFile(file, "utf8");
		expect(text).toContain("label: lisa # the trigger label");
		expect(text).toContain("max_attempts: 3 # attempts per step");
		expect(loaded()).toMatchObject({
			source: "linear",
			models: ["claude"],
			source_config: { team: "ENG", pick_from: "Todo" },
		});

		await writeFile(file, `${text}# my edit\n`);
		const again = await lisa(["init", "--source", "github"], env);
		expect(again.code).toBe(1);
		expect(again.stderr).toContain(`${file} already exists: pass --force to overwrite it`);
		expect(await readFile(file, "utf8")).toBe(`${text}# my edit\n`);
	});

	it("--force overwrites it, with the chosen tracker's defaults", async () => {
		const github = await lisa(["init", "--source", "github", "--force"], env);
		expect(github.code).toBe(0);
		expect(await readFile(file, "utf8")).not.toContain("# my edit");
		expect(loaded()).toMatchObject({
			source: "github",
			source_config: { team: "acme/api", pick_from: "open", in_progress: "in progress" },
		});
		expect((await lisa(["init", "--source", "trello", "--force"], env)).code).toBe(0);
		expect(loaded()).toMatchObject({ source: "trello", source_config: { team: "My Board" } });
		const bad = await lisa(["init", "--source", "jira", "--force"], env);
		expect(bad.code).toBe(1);
		expect(bad.stderr).toContain("--source must be one of linear, trello, github");
	});
});

describe("lisa config", () => {
	beforeAll(async () => {
		await lisa(["init", "--force"], env);
	});

	it("--show prints the effective config, defaults applied", async () => {
		const { code, stdout } = await lisa(["config", "--show"], env);
		expect(code).toBe(0);
		expect(parse(stdout)).toEqual(JSON.parse(JSON.stringify(loaded())));
		expect(parse(stdout).repos[0]).toMatchObject({ slug: "acme/api", base_branch: "main" });
	});

	it("--get prints one value: scalars plain, mappings as YAML", async () => {
		expect((await lisa(["config", "--get", "limits.max_attempts"], env)).stdout).toBe("3\n");
		expect((await lisa(["config", "--get", "repos.0.name"], env)).stdout).toBe("api\n");
		const limits = await lisa(["config", "--get", "limits"], env);
		expect(parse(limits.stdout)).toEqual(loaded().limits);

		const unknown = await lisa(["config", "--get", "limits.nope"], env);
		expect(unknown.code).toBe(1);
		expect(unknown.stderr).toMatch(
			/^no "limits\.nope" in the config: limits has no nope \(it has: max_concurrent_runs, /,
		);
		const far = await lisa(["config", "--get", "repos.3.name"], env);
		expect(far.code).toBe(1);
		expect(far.stderr).toContain("repos has no 3 (it has 1 item(s))");
	});

	it("--set changes one value and keeps every comment", async () => {
		const before = await readFile(file, "utf8");
		const set = await lisa(["config", "--set", "limits.max_attempts=5"], env);
		expect(set.code).toBe(0);
		expect(set.stdout).toBe(`set limits.max_attempts in ${file}\n`);
		const after = before.replace("  max_attempts: 3 #", "  max_attempts: 5 #");
		expect(after).not.toBe(before);
		expect(await readFile(file, "utf8")).toBe(after);
		expect(loaded().limits.max_attempts).toBe(5);

		expect((await lisa(["config", "--set", "models=[claude, gemini]"], env)).code).toBe(0);
		expect(await readFile(file, "utf8")).toBe(
			after.replace("models: [claude] #", "models: [claude, gemini] #"),
		);
		expect((await lisa(["config", "--set", "source_config.merged=Done"], env)).code).toBe(0);
		expect(loaded().source_config.merged).toBe("Done");
		expect((await lisa(["config", "--get", "models"], env)).stdout).toBe("- claude\n- gemini\n");
		expect((await readdir(path.dirname(file))).sort()).toEqual(["config.yaml"]);
	});

	it("--set refuses a value that makes the config invalid, naming the field", async () => {
		const before = await readFile(file, "utf8");
		const zero = await lisa(["config", "--set", "limits.max_attempts=0"], env);
		expect(zero.code).toBe(1);
		expect(zero.stderr).toContain("not written: limits.max_attempts would make the config invalid");
		expect(zero.stderr).toMatch(/- limits\.max_attempts: .* — fix: use a positive number/);
		const provider = await lisa(["config", "--set", "provider=gpt"], env);
		expect(provider.code).toBe(1);
		expect(provider.stderr).toMatch(/- provider: .* — fix: use one of claude, gemini/);
		const typo = await lisa(["config", "--set", "limits.max_attemps=5"], env);
		expect(typo.code).toBe(1);
		expect(typo.stderr).toContain(
			"- limits.max_attemps: unknown key — fix: did you mean `max_attempts`?",
		);
		const get = await lisa(["config", "--get", "limits.max_attemps"], env);
		expect(get.code).toBe(1);
		expect(get.stderr).toContain("did you mean `limits.max_attempts`?");
		const syntax = await lisa(["config", "--set", "models=[claude"], env);
		expect(syntax.code).toBe(1);
		expect(syntax.stderr).toContain("the value is not valid YAML");
		expect(await readFile(file, "utf8")).toBe(before);
		expect((await readdir(path.dirname(file))).sort()).toEqual(["config.yaml"]);
	});

	it("says what to do without a config", async () => {
		const none = { ...env, LISA_CONFIG: path.join(dir, "none.yaml") };
		const show = await lisa(["config", "--show"], none);
		expect(show.code).toBe(1);
		expect(show.stderr).toContain("no config at");
		expect(show.stderr).toContain("run `npx lisa init`");
		expect((await lisa(["config", "--set", "source=trello"], none)).code).toBe(1);
	});
});
