import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAnswer } from "../../src/api/answers";
import type { RunAnswer } from "../../src/api/schemas";
import { closedPort, lisa, run } from "../support/cli";
import { createStackWorld, type StackWorld } from "../support/stack";

// `lisa runs` and `lisa status` as real processes against a running local stack. The token comes
// from the stack's token file in LISA_DATA_DIR, as on a developer's machine after `npm start`.

let w: StackWorld;
let env: NodeJS.ProcessEnv;
const ids: { ok?: string; failed?: string } = {};

beforeAll(async () => {
	w = await createStackWorld();
	env = { ...w.env, LISA_URL: w.url() };
});
afterAll(() => w.stop());

const lines = (text: string) => text.split("\n").filter(Boolean);
const INIT = JSON.stringify({
	type: "system",
	subtype: "init",
	model: "claude-sonnet-4-5-20250929",
});
const RESULT = JSON.stringify({
	type: "result",
	subtype: "success",
	is_error: false,
	num_turns: 3,
	total_cost_usd: 0.42,
	usage: { input_tokens: 9000, output_tokens: 1200 },
});

describe("lisa status <id> --watch", () => {
	it("follows a run to its end, printing what changed, and exits 0 when it succeeded", async () => {
		// The agent names its model and reports its cost as Claude Code does (`init`, `result`).
		const id = await w.startRun(
			"Fix login redirect",
			`lisa-fake: sleep=1\nlisa-fake: stdout=${INIT}\nlisa-fake: stdout=${RESULT}`,
		);
		ids.ok = id;
		const { code, stdout, stderr } = await lisa(
			["status", id, "--watch", "--interval", "0.2"],
			env,
		);
		expect(stderr).toBe("");
		expect(code).toBe(0);
		const out = lines(stdout);
		const headers = out.filter((l) => l.startsWith(`run ${id}  `));
		expect(headers.at(-1)).toMatch(
			new RegExp(`^run ${id}  succeeded  linear ENG-\\d+ "Fix login redirect"  \\(webhook, took `),
		);
		// Not a terminal: each version of the header is printed once, not on every poll.
		expect(new Set(headers).size).toBe(headers.length);
		const pr = w.github.pulls("acme/api")[0]?.html_url;
		expect(pr).toBeDefined();
		expect(out).toContain(`  PRs:   ${pr}`);
		expect(out.some((l) => /^ {4}#1 {2}api {2}succeeded {2}attempt 1 {2}.*claude/.test(l))).toBe(
			true,
		);
		expect(out.some((l) => l.includes(pr as string) && l.includes("#1"))).toBe(true);
		// Under the step: what its PR changed (the fake agent's 3-line LISA_CHANGE.md) and its title.
		const stepAt = out.findLastIndex((l) => /^ {4}#1 {2}api {2}succeeded/.test(l));
		expect(out[stepAt + 1]).toBe('        1 file +3 −0 · "feat: fix login redirect"');
		// The API's step answer, as the CLI read it.
		const { body } = await w.api<RunAnswer>(`/api/runs/${id}`);
		expect(runAnswer.parse(body).steps[0]).toMatchObject({
			prTitle: "feat: fix login redirect",
			changes: {
				files: 1,
				additions: 3,
				deletions: 0,
				list: [{ path: "LISA_CHANGE.md", additions: 3, deletions: 0 }],
			},
		});
		expect(out.some((l) => /^ {4}\d\d:\d\d:\d\d {2}run\.succeeded/.test(l))).toBe(true);
	});

	it("exits 1 when the run fails; --json prints one JSON line per change", async () => {
		const id = await w.startRun("Break things", "lisa-fake: sleep=1\nlisa-fake: exit=3");
		ids.failed = id;
		const { code, stdout } = await lisa(
			["status", id, "--watch", "--json", "--interval", "0.2"],
			env,
		);
		expect(code).toBe(1);
		const runs = lines(stdout).map((l) => JSON.parse(l) as { id: string; status: string });
		expect(runs.every((r) => r.id === id)).toBe(true);
		expect(runs.at(-1)).toMatchObject({ status: "failed" });
		const texts = lines(stdout);
		expect(new Set(texts).size).toBe(texts.length);
	});

	it("without --watch prints the run once: header, steps, error and the timeline", async () => {
		await w.waitForRun(ids.failed as string); // its tracker updates too, so the timeline is complete
		const { code, stdout } = await lisa(["status", ids.failed as string], env);
		expect(code).toBe(0);
		expect(stdout).toMatch(
			new RegExp(`^run ${ids.failed}  failed  linear ENG-\\d+ "Break things"`),
		);
		expect(stdout).toMatch(/\n {2}error: .*claude exited with code 3/);
		expect(stdout).toMatch(/\n {4}#1 {2}api {2}failed +attempt 1 .*error: claude exited/);
		expect(stdout).toMatch(/\n {2}timeline:\n/);
		expect(stdout).toMatch(/run\.failed/);

		const json = await lisa(["status", ids.failed as string, "--json"], env);
		expect(json.code).toBe(0);
		expect(JSON.parse(json.stdout)).toEqual((await w.api(`/api/runs/${ids.failed}`)).body);
	});
});

describe("lisa runs", () => {
	it("prints a table of runs, newest first", async () => {
		const { code, stdout } = await lisa(["runs"], env);
		expect(code).toBe(0);
		const [header, ...rows] = lines(stdout);
		expect(header).toMatch(/^ID\s+STATUS\s+ISSUE\s+REPOS\s+PROVIDER\s+DURATION\s+PRS$/);
		expect(rows).toHaveLength(2);
		expect(rows[0]).toMatch(
			new RegExp(`^${ids.failed}\\s+failed\\s+ENG-\\d+\\s+api\\s+\\S+\\s+\\d+s\\s+-$`),
		);
		const pr = w.github.pulls("acme/api")[0]?.html_url as string;
		expect(rows[1]).toMatch(
			new RegExp(`^${ids.ok}\\s+succeeded\\s+ENG-\\d+\\s+api\\s+claude\\s+\\d+s\\s+`),
		);
		expect(rows[1]?.endsWith(pr)).toBe(true);
	});

	it("passes the filters to the API and hints at the next page", async () => {
		const failed = await lisa(["runs", "--status", "failed"], env);
		expect(
			lines(failed.stdout)
				.slice(1)
				.map((l) => l.split(/\s+/)[0]),
		).toEqual([ids.failed]);

		const page = await lisa(["runs", "--limit", "1"], env);
		expect(page.code).toBe(0);
		const hint = lines(page.stdout).at(-1) as string;
		expect(hint).toMatch(/^more: lisa runs --cursor \S+ \(with the same filters\)$/);
		const cursor = hint.split(" ")[4] as string;
		const next = await lisa(["runs", "--limit", "1", "--cursor", cursor], env);
		expect(lines(next.stdout)[1]?.split(/\s+/)[0]).toBe(ids.ok);

		const bad = await lisa(["runs", "--status", "done"], env);
		expect(bad.code).toBe(1);
		expect(bad.stderr).toMatch(/^Lisa answered 400: invalid request; status: /);
	});

	it("reads with the read-only token, filtering by repo, issue and creation time", async () => {
		const read = { ...env, LISA_READ_TOKEN: w.stack?.readToken };
		const ok = (await w.api<{ issueKey: string }>(`/api/runs/${ids.ok}`)).body;
		const runIds = async (...args: string[]) => {
			const { code, stdout, stderr } = await lisa(["runs", "--json", ...args], read);
			expect(stderr).toBe("");
			expect(code).toBe(0);
			return (JSON.parse(stdout) as { runs: { id: string }[] }).runs.map((r) => r.id);
		};
		expect(await runIds("--issue", ok.issueKey)).toEqual([ids.ok]);
		expect((await runIds("--repo", "api")).sort()).toEqual([ids.ok, ids.failed].sort());
		expect(await runIds("--repo", "web")).toEqual([]);
		expect(await runIds("--since", new Date(Date.now() + 3600_000).toISOString())).toEqual([]);
		expect((await runIds("--since", "2026-01-01", "--until", "2999-01-01")).length).toBe(2);
	});

	it("--json prints the API's JSON as it is", async () => {
		const { code, stdout } = await lisa(["runs", "--json", "--source", "linear"], env);
		expect(code).toBe(0);
		expect(JSON.parse(stdout)).toEqual((await w.api("/api/runs?source=linear")).body);
	});
});

describe("lisa status (overview)", () => {
	it("prints the counts, the success rate, the cost and the active runs", async () => {
		const { code, stdout } = await lisa(["status"], env);
		expect(code).toBe(0);
		expect(lines(stdout)).toEqual([
			"runs: 2 (queued 0 · planning 0 · running 0 · awaiting_approval 0 · succeeded 1 · failed 1 · cancelled 0)",
			"success rate: 50%",
			// The failed run's agent reported nothing and named no model: unknown, never a guessed $0.
			"cost: at least $0.42 (1 run of unknown cost) · $0.42 a succeeded run",
			"no active runs",
		]);
		const json = await lisa(["status", "--json"], env);
		expect(JSON.parse(json.stdout)).toMatchObject({
			stats: { total: 2, successRate: 0.5, counts: { succeeded: 1, failed: 1 } },
			active: [],
		});
	});
});

describe("errors say what to do", () => {
	it("a refused token: a clear message, exit 1, and the token is never printed", async () => {
		const secret = "lisa_not-the-right-token-0123456789";
		const { code, out } = await lisa(["runs"], { ...env, LISA_API_TOKEN: secret });
		expect(code).toBe(1);
		expect(out).toMatch(
			/^Lisa at \S+ refused the token in LISA_API_TOKEN \(Lisa said: invalid bearer token\): set LISA_API_TOKEN to the API token `npm start` printed\n$/,
		);
		expect(out).not.toContain(secret);
		const flag = await lisa(["status", "--token", secret], env);
		expect(flag.code).toBe(1);
		expect(flag.out).toContain(
			"refused the token given with --token (Lisa said: invalid bearer token): check it against the API token `npm start` printed",
		);
		expect(flag.out).not.toContain("pass --token");
		expect(flag.out).not.toContain(secret);
	});

	it("no token anywhere: where it looked, and what to set", async () => {
		const empty = path.join(w.dir, "elsewhere");
		const { LISA_API_TOKEN: _a, LISA_READ_TOKEN: _r, ...rest } = env;
		const { code, stderr } = await lisa(["runs"], { ...rest, LISA_DATA_DIR: empty });
		expect(code).toBe(1);
		expect(stderr).toBe(
			`Lisa at ${w.url()} needs a token, and none was found (looked at --token, LISA_API_TOKEN, LISA_READ_TOKEN, ${empty}/api-token): set LISA_API_TOKEN to the API token \`npm start\` printed (or LISA_READ_TOKEN to its read token)\n`,
		);
	});

	it("a misspelled command: the nearest one, not the whole usage (the real `npx lisa`)", async () => {
		const npx = await run("npx", ["lisa", "stauts"], env);
		expect(npx.code).toBe(1);
		expect(npx.stderr).toBe(
			'lisa: there is no command "stauts"; did you mean `npx lisa status`? (`npx lisa --help` lists them)\n',
		);
		expect(npx.stdout).toBe("");
		const far = await run("npx", ["lisa", "deploy"], env);
		expect(far.stderr).toBe('lisa: there is no command "deploy" (`npx lisa --help` lists them)\n');
	});

	it("an unknown run id, and one that is not a run id", async () => {
		const { code, stderr } = await lisa(["status", "01JD8X4Z0Q5N8M2R7K3V9W6T1E"], env);
		expect(code).toBe(1);
		expect(stderr.trim()).toBe("no run 01JD8X4Z0Q5N8M2R7K3V9W6T1E");
		const malformed = await lisa(["status", "01JUNKNOWNRUN000000000000"], env);
		expect(malformed.code).toBe(1);
		expect(malformed.stderr.trim()).toBe(
			"Lisa answered 400: invalid request; id: must be a run id (a ULID: 26 characters of 0-9 and A-Z)",
		);
	});

	it("no Lisa at the URL", async () => {
		const url = `http://127.0.0.1:${await closedPort()}`;
		const { code, stderr } = await lisa(["runs", "--url", url], env);
		expect(code).toBe(1);
		expect(stderr.trim()).toBe(`no Lisa at ${url}: start one with \`npm start\` or pass --url`);
	});
});
