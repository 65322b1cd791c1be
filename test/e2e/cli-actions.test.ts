import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort, lisa } from "../support/cli";
import { createStackWorld, type StackWorld } from "../support/stack";

// `lisa logs`, `lisa cancel` and `lisa retry` as real processes against a running local stack,
// with the token from the stack's token file as on the machine that runs `npm start`.

let w: StackWorld;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
	w = await createStackWorld({ configExtra: "limits: {max_attempts: 1}" });
	env = { ...w.env, LISA_URL: w.url() };
});
afterAll(() => w.stop());

const lines = (text: string) => text.split("\n").filter(Boolean);
const ESC = "\u001b";

describe("lisa logs", () => {
	it("--follow prints the timeline with the agent's output as it comes, and exits 0 when the run succeeded", async () => {
		const id = await w.startRun("Print something", "lisa-fake: sleep=1");
		const { code, stdout, stderr } = await lisa(["logs", id, "--follow", "--interval", "0.2"], env);
		expect(stderr).toBe("");
		expect(code).toBe(0);
		const out = lines(stdout);
		expect(out[0]).toMatch(/^\d\d:\d\d:\d\d {2}run\.requested {2}/);
		expect(out.at(-1)).toMatch(/^\d\d:\d\d:\d\d {2}run\.succeeded {2}/);
		expect(out.filter((l) => l.includes("agent.output"))).toEqual([
			// What the fake agent prints while it works.
			// The step as every view numbers it (src/domain/step-label.js): the first is #1.
			expect.stringMatching(/^\d\d:\d\d:\d\d {2}agent\.output #1 {2}working… 1\/1$/),
		]);
		// Every entry once, in the order of the timeline.
		const events = await w.api<{ events: { type: string }[] }>(`/api/runs/${id}/events?limit=500`);
		expect(
			out.filter((l) => /^\d\d:\d\d:\d\d {2}/.test(l)).map((l) => l.split("  ")[1]?.split(" ")[0]),
		).toEqual(events.body.events.map((e) => e.type));
		expect(stdout).not.toContain(ESC);

		// Without --follow: the same timeline, once; --json: one event per line.
		const again = await lisa(["logs", id], env);
		expect(again.code).toBe(0);
		expect(again.stdout).toBe(stdout);
		const json = await lisa(["logs", id, "--json"], env);
		expect(lines(json.stdout).map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(
			events.body.events.map((e) => e.type),
		);
	});

	it("--follow exits 1 when the run fails", async () => {
		const id = await w.startRun("Break", "lisa-fake: exit=3");
		const { code, stdout } = await lisa(["logs", id, "-f", "--interval", "0.2"], env);
		expect(code).toBe(1);
		expect(lines(stdout).at(-1)).toMatch(/run\.failed/);
	});

	it("refuses an --interval that is not a number of seconds a timer can wait, before asking Lisa", async () => {
		for (const [command, flag] of [
			["logs", "--follow"],
			["status", "--watch"],
		] as const)
			for (const interval of ["0", "soon", "Infinity", "1e9"]) {
				const out = await lisa([command, ulid(), flag, "--interval", interval], env);
				expect(out).toMatchObject({
					code: 1,
					stdout: "",
					stderr: `--interval must be a number of seconds > 0 and ≤ 86400 (got "${interval}")\n`,
				});
			}
	});
});

describe("lisa cancel and lisa retry", () => {
	it("cancel stops an active run; retry starts a finished one again; each refusal is Lisa's words, exit 1", async () => {
		const id = await w.startRun("Never finishes", "lisa-fake: sleep=60");
		await w.waitForRun(id, (r) => r.steps[0]?.status === "running");

		const early = await lisa(["retry", id], env);
		expect(early).toMatchObject({
			code: 1,
			stdout: "",
			stderr: "Lisa answered 409: run is still running\n",
		});

		const read = await lisa(["cancel", id], { ...env, LISA_API_TOKEN: w.stack?.readToken });
		expect(read.code).toBe(1);
		expect(read.stderr).toBe(
			"this token is read-only: actions need the admin token (LISA_API_TOKEN)\n",
		);

		const cancel = await lisa(["cancel", id], env);
		expect(cancel).toMatchObject({ code: 0, stderr: "" });
		expect(cancel.stdout).toBe(
			`cancelling run ${id}: its tasks are stopped; npx lisa status ${id} --watch follows it\n`,
		);
		const cancelled = await w.waitForRun(id, (r) => r.status === "cancelled");
		expect(cancelled.steps[0]?.status).toBe("cancelled");
		const twice = await lisa(["cancel", id], env);
		expect(twice).toMatchObject({ code: 1, stderr: "Lisa answered 409: run already cancelled\n" });

		const retry = await lisa(["retry", id], env);
		expect(retry.code).toBe(0);
		const newId = retry.stdout.match(
			/^run (\S+) retries (\S+): npx lisa status \1 --watch follows it\n$/,
		);
		expect(newId?.[2]).toBe(id);
		const second = await w.waitForRun(newId?.[1] as string, (r) => r.status === "running");
		expect(second).toMatchObject({ trigger: "retry", issueId: cancelled.issueId });
		expect((await lisa(["cancel", newId?.[1] as string], env)).code).toBe(0);
		await w.waitForRun(newId?.[1] as string, (r) => r.status === "cancelled");
	});

	it("prints no colour codes into a pipe, nor with NO_COLOR set", async () => {
		for (const extra of [{}, { NO_COLOR: "yes" }]) {
			const help = await lisa(["--help"], { ...env, ...extra });
			expect(help.code).toBe(0);
			expect(help.stdout).toContain("USAGE lisa start|image|run|runs|status|logs|cancel|retry|");
			expect(help.out).not.toContain(ESC);
		}
	});

	it("an unknown run, a malformed id, no Lisa and a missing id are clear errors", async () => {
		const unknown = ulid();
		for (const command of ["cancel", "retry", "logs"]) {
			expect(await lisa([command, unknown], env)).toMatchObject({
				code: 1,
				stderr: `no run ${unknown}\n`,
			});
			// An id is one path segment: "../stats/rebuild" must not reach POST /api/stats/rebuild.
			for (const id of ["NOPE", "../stats/rebuild"]) {
				const bad = await lisa([command, id], env);
				expect(bad.code).toBe(1);
				expect(bad.stderr).toMatch(/^Lisa answered 400: invalid request; id: must be a run id/);
			}
			const port = await closedPort();
			const none = await lisa([command, unknown, "--url", `http://127.0.0.1:${port}`], env);
			expect(none).toMatchObject({
				code: 1,
				stderr: `no Lisa at http://127.0.0.1:${port}: start one with \`npm start\` or pass --url\n`,
			});
			const missing = await lisa([command], env);
			expect(missing.code).toBe(1);
			expect(missing.out).toContain("Missing required positional argument: RUNID");
			expect(missing.out).not.toContain(ESC);
		}
	});
});
