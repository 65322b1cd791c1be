import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRun, type Run } from "../../src/domain/run";
import { lisa } from "../support/cli";
import { diamondEpic } from "../support/epics";
import { createStackWorld, type StackWorld } from "../support/stack";

// `lisa plan` and `lisa status` of epics (docs/epics.md › Epics) as real processes against a
// running local stack, with the token from the stack's token file.

let w: StackWorld;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
	w = await createStackWorld({ configExtra: "limits: {max_attempts: 1}" });
	env = { ...w.env, LISA_URL: w.url() };
});
afterAll(() => w.stop());

const lines = (text: string) => text.split("\n").filter(Boolean);
const store = () => {
	if (!w.stack) throw new Error("no stack");
	return w.stack.deps.store;
};

const USAGE =
	"lisa plan takes one of --issue <key> (plan the issue into sub-issues) or --continue <run> (resume an epic run)";

describe("lisa status of an epic", () => {
	it("shows the epic's phase and a line per task; a task's run names its epic", async () => {
		const { epic, task } = diamondEpic();
		await store().createRun(epic);
		await store().createRun(task);
		const { code, stdout, stderr } = await lisa(["status", epic.runId], env);
		expect(stderr).toBe("");
		expect(code).toBe(0);
		const out = lines(stdout);
		expect(out).toContain("  epic:  tasks, 1 of 4 tasks done");
		const at = out.indexOf("  tasks:");
		expect(out.slice(at + 1, at + 6)).toEqual([
			"    ID  TITLE                REPO  AFTER  STATUS   ISSUE    PRS",
			"    01  Add the model        api   -      done     ENG-901  https://github.com/acme/api/pull/71",
			"    02  Serve it over HTTP   api   01     running  ENG-902  -",
			"    03  Show it on the page  web   01     failed   ENG-903  (the agent gave up)",
			"    04  Document it          api   02,03  blocked  ENG-904  (blocked by 03)",
		]);
		const taskRun = await lisa(["status", task.runId], env);
		expect(taskRun.code).toBe(0);
		expect(lines(taskRun.stdout)).toContain(`  epic:  task 02 of run ${epic.runId}`);
	});
});

describe("lisa plan", () => {
	it("--issue starts an epic run for the issue and says how to follow it", async () => {
		const issue = w.issue("Reports, end to end", "lisa-fake: exit=3");
		const { code, stdout, stderr } = await lisa(["plan", "--issue", issue.identifier], env);
		expect(stderr).toBe("");
		expect(code).toBe(0);
		const id = stdout.match(
			new RegExp(
				`^epic run (\\S+) plans ${issue.identifier}: npx lisa status \\1 --watch follows it; its tasks: ${w.url()}/runs/\\1\\n$`,
			),
		)?.[1];
		expect(id).toBeDefined();
		// Its issue is read at intake: wait for it, not just for the run to exist.
		const run = await w.waitForRun(id as string, (r) => r.issueKey !== undefined);
		expect(run).toMatchObject({ trigger: "api", issueKey: issue.identifier });
		await w.api(`/api/runs/${id}/cancel`, { method: "POST" });

		const read = await lisa(["plan", "--issue", issue.identifier], {
			...env,
			LISA_API_TOKEN: w.stack?.readToken,
		});
		expect(read).toMatchObject({
			code: 1,
			stdout: "",
			stderr: "this token is read-only: actions need the admin token (LISA_API_TOKEN)\n",
		});
	});

	it("--continue resumes a finished epic run, and refuses a run that is not an epic in Lisa's words", async () => {
		const { epic } = diamondEpic();
		await store().createRun({ ...epic, status: "failed", finishedAt: new Date().toISOString() });
		const { code, stdout, stderr } = await lisa(["plan", "--continue", epic.runId], env);
		expect(stderr).toBe("");
		expect(code).toBe(0);
		expect(stdout).toMatch(
			new RegExp(
				`^epic run (\\S+) continues ${epic.runId}: npx lisa status \\1 --watch follows it; its tasks: ${w.url()}/runs/\\1\\n$`,
			),
		);

		const plain: Run = {
			...newRun({
				runId: diamondEpic().task.runId,
				source: "linear",
				issueId: "plain",
				trigger: "webhook",
				now: new Date().toISOString(),
			}),
			status: "failed",
		};
		await store().createRun(plain);
		expect(await lisa(["plan", "--continue", plain.runId], env)).toMatchObject({
			code: 1,
			stdout: "",
			stderr: `Lisa answered 404: run ${plain.runId} is not an epic: it is an issue's run\n`,
		});
		const unknown = diamondEpic().epic.runId;
		expect(await lisa(["plan", "--continue", unknown], env)).toMatchObject({
			code: 1,
			stderr: "Lisa answered 404: run not found\n",
		});
		// An id is one path segment: "../../stats/rebuild" must not reach another route.
		const bad = await lisa(["plan", "--continue", "../../stats/rebuild"], env);
		expect(bad.code).toBe(1);
		expect(bad.stderr).toMatch(/^Lisa answered 400: invalid request; id: must be a run id/);
	});

	it("takes exactly one of --issue and --continue, and says so before asking Lisa", async () => {
		// No Lisa at this URL: a refusal here cannot have come from the API.
		const offline = { ...env, LISA_URL: "http://127.0.0.1:9" };
		for (const [args, message] of [
			[[], USAGE],
			[["--issue", "ENG-1", "--continue", "01ABC"], `${USAGE}, not both`],
			[["--issue", " "], USAGE],
			// citty ignores flags it does not know: a misspelt one leaves neither.
			[["--isue", "ENG-1"], `${USAGE}: there is no option --isue`],
			[["ENG-1"], `${USAGE}, not "ENG-1" (did you mean --issue ENG-1?)`],
			[["--issue", "ENG-1", "ENG-2"], `${USAGE}, not "ENG-2"`],
		] as const) {
			expect(await lisa(["plan", ...args], offline)).toMatchObject({
				code: 1,
				stdout: "",
				stderr: `${message}\n`,
			});
		}
	});
});
