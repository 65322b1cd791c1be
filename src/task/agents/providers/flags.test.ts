import { describe, expect, it } from "vitest";
import { AGENT_CLI_PATH } from "../../../../test/support/agent-cli";
import { CLI_SPECS as specs } from ".";
import { cliFlagCheck, flagsOf } from "./flags";

const env = { ...process.env, PATH: AGENT_CLI_PATH };

describe("the flags Lisa passes each agent CLI", () => {
	it.each(specs.map((s) => [s.name, s] as const))(
		"are all listed by the pinned %s",
		async (_name, spec) => {
			const check = await cliFlagCheck(spec, env);
			expect(check.error).toBeUndefined();
			expect(check.missing).toEqual([]);
			expect(flagsOf(spec).length).toBeGreaterThan(2);
		},
	);

	it("catches a flag the CLI no longer has, as codex 0.169 dropped --full-auto", async () => {
		const codex = specs.find((s) => s.name === "codex");
		if (!codex) throw new Error("no codex");
		const old = { ...codex, argv: () => ["exec", "--full-auto", "--model", "M", "--", "PROMPT"] };
		expect(flagsOf(old)).toEqual(["--full-auto", "--model"]);
		expect((await cliFlagCheck(old, env)).missing).toEqual(["--full-auto"]);
	});

	it('reads a flag given with its value (--prompt=…) by its name, and never stdin\'s "-" as one', () => {
		const codex = specs.find((s) => s.name === "codex");
		if (!codex) throw new Error("no codex");
		expect(flagsOf({ ...codex, argv: () => ["--prompt=hello", "-m", "M"] })).toEqual([
			"--prompt",
			"-m",
		]);
		expect(codex.argv({ cwd: "/", env: {}, timeoutMs: 0, scratchDir: "/" }).at(-1)).toBe("-");
		expect(flagsOf(codex)).not.toContain("-");
	});
});
