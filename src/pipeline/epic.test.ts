import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
	epicPlanFiles,
	needsSpecText,
	type PlannedTask,
	planFilesRead,
	researchText,
} from "../../test/doubles/agents/directives";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import type { EpicPlan } from "../domain/epic";
import { checkPlan } from "../domain/epic-files";
import type { Run } from "../domain/run";
import { cancelRequested, epicAdvance, runRequested } from "../queue/messages";
import { awsClients } from "../runtime/aws";
import { handleEpicAdvance } from "./epic";
import { SWEEP, sweep } from "./sweeper";

// An epic through the pipeline's handlers (docs/epics.md › Epics), with the Linear double behind
// the real client: research → plan → one sub-issue per task with its `blocks` relations → the
// tasks' runs in dependency order → the epic's end. The agent tasks are played by the test (their
// reports).

const REPOS = ["api", "web"];
let w: PipelineWorld;
beforeAll(async () => {
	w = await pipelineWorld({ repos: REPOS });
});
afterAll(() => w.stop());
afterEach(() => expect(w.unused()).toEqual([]));

const t = (id: string, repo: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title: `Task ${id}`,
	repo,
	dependsOn,
});
/** A; B and C after A; D after both. */
const DIAMOND = [
	t("01", "api"),
	t("02", "api", "01"),
	t("03", "web", "01"),
	t("04", "web", "02", "03"),
];

/** The plan as the plan step reports it: its files, checked as the task checks them. */
function planOf(tasks: PlannedTask[]): EpicPlan {
	const files = epicPlanFiles(tasks);
	const verdict = checkPlan(planFilesRead(files), REPOS, 10);
	if (!verdict.ok) throw new Error(verdict.missing.join("; "));
	return verdict.value;
}

/** `run.requested` of kind epic for the issue, as `POST /api/epics` (or a continue) sends it. */
async function requestEpic(
	issue: { id: string; identifier: string },
	runId: string,
	more: { trigger: "api" } | { trigger: "retry"; retryOf: string } = { trigger: "api" },
) {
	await w.deps.queue.send(
		"intake",
		runRequested({
			source: "linear",
			issueId: issue.id,
			issueKey: issue.identifier,
			kind: "epic",
			requestedAt: w.now().toISOString(),
			runId,
			...more,
		}),
	);
	await w.settle();
}

async function startEpic(title: string) {
	const issue = w.issue(title);
	const runId = w.deps.newRunId();
	await requestEpic(issue, runId);
	return { issue, runId };
}

const runOf = async (id: string) => (await w.store.getRun(id)) as Run;

/** Research, then the plan: the epic's tasks are created and the first ones started. */
async function planEpic(runId: string, tasks: PlannedTask[]) {
	await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
	await w.settle();
	await w.finishTask(runId, 1, 1, { epicPlan: planOf(tasks) });
	await w.settle();
	return runOf(runId);
}

const taskRun = async (epicId: string, taskId: string) =>
	(await runOf(epicId)).epic?.tasks.find((x) => x.id === taskId)?.runId as string;

/** A task's run opens its pull request. */
async function finishTaskRun(epicId: string, taskId: string, error?: string) {
	const id = await taskRun(epicId, taskId);
	expect(w.launchesOf(id)).toEqual([{ step: 0, attempt: 1 }]);
	await w.finishTask(
		id,
		0,
		1,
		error
			? { error }
			: { prUrl: `https://github.com/acme/x/pull/${taskId}`, branch: `lisa/task-${taskId}` },
	);
	await w.settle();
}

const statuses = async (epicId: string) =>
	Object.fromEntries(((await runOf(epicId)).epic?.tasks ?? []).map((x) => [x.id, x.status]));

const subIssues = (epicIssueId: string) =>
	w.linear.state.issues.filter((i) => i.parentId === epicIssueId);

describe("an epic planned as a diamond (A; B and C after A; D after both)", () => {
	it("creates four sub-issues with their relations once, runs them in dependency order and completes", async () => {
		const { issue, runId } = await startEpic("Export the reports");
		let run = await runOf(runId);
		expect(run.epic).toEqual({ tasks: [] });
		expect(run.status).toBe("planning");
		expect(run.steps.map((s) => [s.kind, s.repo, s.status])).toEqual([
			["research", "*", "running"],
		]);

		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		run = await runOf(runId);
		expect(run.steps.map((s) => [s.kind, s.status])).toEqual([
			["research", "succeeded"],
			["epic_plan", "running"],
		]);
		expect(run.epic?.research?.text).toContain("## Relevant Files");

		// The plan's report arrives twice, and a second pass is asked for while the first works.
		await w.finishTask(runId, 1, 1, { epicPlan: planOf(DIAMOND) });
		await w.deps.queue.send("events", epicAdvance({ runId, why: "a redelivery" }));
		await w.settle();
		await w.deps.queue.send("events", epicAdvance({ runId, why: "a redelivery" }));
		await w.settle();

		const subs = subIssues(issue.id);
		expect(subs.map((s) => s.title).sort()).toEqual(["Task 01", "Task 02", "Task 03", "Task 04"]);
		const idOf = (title: string) => subs.find((s) => s.title === title)?.id;
		const blocks = w.linear.state.relations
			.filter((r) => r.type === "blocks" && subs.some((s) => s.id === r.issueId))
			.map((r) => [
				subs.find((s) => s.id === r.issueId)?.title,
				subs.find((s) => s.id === r.relatedIssueId)?.title,
			])
			.sort();
		expect(blocks).toEqual([
			["Task 01", "Task 02"],
			["Task 01", "Task 03"],
			["Task 02", "Task 04"],
			["Task 03", "Task 04"],
		]);
		// Each sub-issue says what it is part of and what blocks it.
		const d = subs.find((s) => s.title === "Task 04");
		expect(d?.description).toContain(`Part of ${issue.identifier}`);
		const key = (title: string) => w.linear.issue(idOf(title) as string).identifier;
		expect(d?.description).toContain(`Blocked by ${key("Task 02")}, ${key("Task 03")}.`);

		run = await runOf(runId);
		expect(run.status).toBe("running");
		expect(await statuses(runId)).toEqual({
			"01": "running",
			"02": "waiting",
			"03": "waiting",
			"04": "waiting",
		});
		// The epic gave its slot back: its tasks take their own.
		expect(await w.store.runSlotHolders()).not.toContain(runId);

		await finishTaskRun(runId, "01");
		// B and C side by side: both started before either finished.
		expect(await statuses(runId)).toEqual({
			"01": "done",
			"02": "running",
			"03": "running",
			"04": "waiting",
		});
		const b = await runOf(await taskRun(runId, "02"));
		expect(b.epicTask?.dependencies.map((x) => [x.id, x.prs.map((p) => p.url)])).toEqual([
			["01", ["https://github.com/acme/x/pull/01"]],
		]);
		expect(b.steps.map((s) => s.repo)).toEqual(["api"]);
		expect((await runOf(await taskRun(runId, "03"))).steps.map((s) => s.repo)).toEqual(["web"]);

		await finishTaskRun(runId, "03");
		expect(await statuses(runId)).toEqual({
			"01": "done",
			"02": "running",
			"03": "done",
			"04": "waiting",
		});
		await finishTaskRun(runId, "02");
		const dRun = await runOf(await taskRun(runId, "04"));
		expect(dRun.epicTask?.dependencies.map((x) => x.id)).toEqual(["02", "03"]);
		await finishTaskRun(runId, "04");

		run = await runOf(runId);
		expect(run.status).toBe("succeeded");
		expect(run.tracker.done).toBe(true);
		// Still four sub-issues, and one progress comment, edited in place to its end.
		expect(subIssues(issue.id)).toHaveLength(4);
		const progress = w.linear.state.comments.filter(
			(c) => c.issueId === issue.id && c.body.includes("4 tasks done"),
		);
		expect(progress).toHaveLength(1);
		expect(progress[0]?.body).toMatch(/^Lisa resolved this epic: 4 of 4 tasks done\./);
		expect(progress[0]?.editedAt).not.toBeNull();
		expect(w.linear.stateName(issue.id)).toBe("In Review");
	});
});

describe("a crash between creating a sub-issue and recording it", () => {
	it("finds the sub-issue by its marker instead of creating it again", async () => {
		const { issue, runId } = await startEpic("Crashy epic");
		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		// The write that records task 01's sub-issue fails once, after the sub-issue was created.
		w.failDynamo(
			(r) =>
				r.command === "UpdateItemCommand" &&
				r.json.includes('"issue"') &&
				r.json.includes("Task 01"),
		);
		await w.finishTask(runId, 1, 1, { epicPlan: planOf([t("01", "api"), t("02", "web", "01")]) });
		await w.settle();
		// The failed message is redelivered (settle drops it after its tries): the sweeper's pass.
		await w.deps.queue.send("events", epicAdvance({ runId, why: "a test's pass" }));
		await w.settle();
		expect(
			subIssues(issue.id)
				.map((s) => s.title)
				.sort(),
		).toEqual(["Task 01", "Task 02"]);
		expect(await statuses(runId)).toEqual({ "01": "running", "02": "waiting" });
		const created = (await w.timeline(runId)).filter((e) => e.type === "epic.task_created");
		expect(created.map((e) => e.message)).toEqual([
			expect.stringMatching(/^task 01 "Task 01" found as /),
			expect.stringMatching(/^task 02 "Task 02" created as /),
		]);
	});
});

describe("a large plan", () => {
	it("is created five sub-issues a pass, the next pass asked for at once", async () => {
		const { issue, runId } = await startEpic("Large epic");
		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		const ids = ["01", "02", "03", "04", "05", "06", "07"];
		const chain = ids.map((id, i) => t(id, "api", ...(i ? [ids[i - 1] as string] : [])));
		await w.finishTask(runId, 1, 1, { epicPlan: planOf(chain) });
		await w.deliver("events"); // the plan accepted
		await w.deliver("events"); // the first pass
		expect(subIssues(issue.id)).toHaveLength(5);
		await w.settle();
		expect(
			subIssues(issue.id)
				.map((x) => x.title)
				.sort(),
		).toEqual(ids.map((id) => `Task ${id}`));
		expect(await statuses(runId)).toMatchObject({ "01": "running", "07": "waiting" });
		// Its task's run gives its slot back for the tests after this one.
		await w.deps.queue.send(
			"events",
			cancelRequested({ runId, reason: "done looking", requestedAt: w.now().toISOString() }),
		);
		await w.settle();
	});
});

describe("two passes over one epic at once", () => {
	it("create each sub-issue once: the second asks the first to go again", async () => {
		const { issue, runId } = await startEpic("Busy epic");
		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		await w.finishTask(runId, 1, 1, { epicPlan: planOf([t("01", "api"), t("02", "web", "01")]) });
		await w.deliver("events"); // the report: the plan accepted, `epic.advance` sent
		// The first pass is creating task 01's sub-issue when a second pass arrives.
		const creating = w.gate.hold(/issueCreate/);
		const first = w.deliver("events");
		await creating.held;
		await handleEpicAdvance(w.deps, epicAdvance({ runId, why: "a concurrent change" }));
		expect((await runOf(runId)).epic?.lease?.again).toBe(true);
		creating.release();
		await first;
		await w.settle();
		expect(
			subIssues(issue.id)
				.map((s) => s.title)
				.sort(),
		).toEqual(["Task 01", "Task 02"]);
		expect((await runOf(runId)).epic?.lease).toBeUndefined();
		expect(await statuses(runId)).toEqual({ "01": "running", "02": "waiting" });
	});
});

describe("a failing task", () => {
	it("blocks the tasks after it, which never start, and the epic says why; a continue resumes it", async () => {
		const { issue, runId } = await startEpic("Doomed epic");
		await planEpic(runId, DIAMOND);
		await finishTaskRun(runId, "01", "the tests failed");
		const run = await runOf(runId);
		expect(run.status).toBe("failed");
		expect(await statuses(runId)).toEqual({
			"01": "failed",
			"02": "blocked",
			"03": "blocked",
			"04": "blocked",
		});
		expect(run.error).toBe(
			"task 01 failed: the tests failed; blocked, so never started: 02, 03, 04",
		);
		for (const id of ["02", "03", "04"]) expect(await taskRun(runId, id)).toBeUndefined();
		const progress = w.linear.state.comments.filter(
			(c) => c.issueId === issue.id && c.body.includes("tasks done"),
		);
		expect(progress).toHaveLength(1);
		expect(progress[0]?.body).toContain(
			"Lisa's epic stopped (0 of 4 tasks done): task 01 failed: the tests failed",
		);
		expect(progress[0]?.body).toMatch(/⛔ 02 Task 02 \(api, [A-Z]+-\d+\): blocked: task 01 failed/);

		// Continued: the same sub-issues, task 01 gets a new run, the rest follow.
		const next = w.deps.newRunId();
		await requestEpic(issue, next, { trigger: "retry", retryOf: runId });
		const continued = await runOf(next);
		expect(continued.steps).toEqual([]);
		expect(continued.epic?.continues).toBe(runId);
		// The old run hands the epic over: only the new one may be continued, its tasks report there.
		expect((await runOf(runId)).epic?.continuedBy).toBe(next);
		expect(await statuses(next)).toEqual({
			"01": "running",
			"02": "waiting",
			"03": "waiting",
			"04": "waiting",
		});
		expect(await taskRun(next, "01")).not.toBe(await taskRun(runId, "01"));
		for (const id of ["01", "03", "02", "04"]) await finishTaskRun(next, id);
		expect((await runOf(next)).status).toBe("succeeded");
		expect(subIssues(issue.id)).toHaveLength(4);
		// One progress comment for the epic, whichever run edits it.
		expect(
			w.linear.state.comments.filter(
				(c) => c.issueId === issue.id && c.body.includes("tasks done"),
			),
		).toHaveLength(1);
	});
});

describe("a lost epic.advance", () => {
	it("is made up by the sweeper once the epic has been still for a while", async () => {
		const { runId } = await startEpic("Forgetful epic");
		await planEpic(runId, [t("01", "api"), t("02", "web", "01")]);
		const a = await taskRun(runId, "01");
		await w.finishTask(a, 0, 1, { prUrl: "https://github.com/acme/x/pull/77", branch: "lisa/a" });
		// The task's report is handled; the `epic.advance` its run's end sent is lost.
		await w.deliver("events");
		const { sqs } = awsClients(w.settings);
		const lost = await sqs.send(
			new ReceiveMessageCommand({ QueueUrl: w.settings.eventsQueueUrl, MaxNumberOfMessages: 10 }),
		);
		expect(lost.Messages?.map((m) => JSON.parse(m.Body ?? "{}").type)).toEqual(["epic.advance"]);
		for (const m of lost.Messages ?? [])
			await sqs.send(
				new DeleteMessageCommand({
					QueueUrl: w.settings.eventsQueueUrl,
					ReceiptHandle: m.ReceiptHandle,
				}),
			);
		expect((await runOf(a)).status).toBe("succeeded");
		expect(await statuses(runId)).toEqual({ "01": "running", "02": "waiting" });

		await sweep(w.deps);
		await w.settle();
		expect(await statuses(runId)).toEqual({ "01": "running", "02": "waiting" });
		w.advance(SWEEP.epicGraceMs + 1000);
		await sweep(w.deps);
		await w.settle();
		expect(await statuses(runId)).toEqual({ "01": "done", "02": "running" });
	});
});

describe("the progress comment", () => {
	it("is posted by the next pass when posting it failed, once", async () => {
		const { issue, runId } = await startEpic("Chatty epic");
		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		w.gate.failNext(/commentCreate/);
		await w.finishTask(runId, 1, 1, { epicPlan: planOf([t("01", "api")]) });
		await w.settle();
		expect((await runOf(runId)).epic?.comment).toBeUndefined();
		await w.deps.queue.send("events", epicAdvance({ runId, why: "the next pass" }));
		await w.settle();
		const progress = w.linear.state.comments.filter(
			(c) => c.issueId === issue.id && c.body.includes("tasks done"),
		);
		expect(progress).toHaveLength(1);
		expect((await runOf(runId)).epic?.comment?.id).toBe(progress[0]?.id);
	});
});

describe("cancelling an epic", () => {
	it("cancels its tasks' active runs with it", async () => {
		const { runId } = await startEpic("Cancelled epic");
		await planEpic(runId, [t("01", "api"), t("02", "web")]);
		const [a, b] = [await taskRun(runId, "01"), await taskRun(runId, "02")];
		await w.deps.queue.send(
			"events",
			cancelRequested({ runId, reason: "not now", requestedAt: w.now().toISOString() }),
		);
		await w.settle();
		expect((await runOf(runId)).status).toBe("cancelled");
		expect((await runOf(a)).status).toBe("cancelled");
		expect((await runOf(b)).status).toBe("cancelled");
		expect((await runOf(a)).error).toBe(`its epic's run ${runId} cancelled`);
		// The ended epic followed its tasks' runs, and its comment says so.
		const epic = (await runOf(runId)).epic;
		expect(epic?.tasks.map((t) => [t.id, t.status, t.reason])).toEqual([
			["01", "cancelled", `its epic's run ${runId} cancelled`],
			["02", "cancelled", `its epic's run ${runId} cancelled`],
		]);
		const comment = w.linear.state.comments.find((c) => c.id === epic?.comment?.id);
		expect(comment?.body).not.toContain("in progress");
		expect(comment?.body).toMatch(/⏹️ 01 Task 01 \(api, \S+\): cancelled: its epic's run/);
	});

	it("cancels a task's run requested just before, untouched, when its intake comes after", async () => {
		const { runId } = await startEpic("Cancelled in between");
		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		await w.finishTask(runId, 1, 1, { epicPlan: planOf([t("01", "api")]) });
		await w.deliver("events"); // the plan accepted
		await w.deliver("events"); // the pass: task 01's run requested, its intake not yet run
		const a = await taskRun(runId, "01");
		await w.deps.queue.send(
			"events",
			cancelRequested({ runId, reason: "not now", requestedAt: w.now().toISOString() }),
		);
		await w.deliver("events");
		await w.settle();
		const child = await runOf(a);
		expect(child.status).toBe("cancelled");
		expect(child.error).toBe(`its epic's run ${runId} cancelled`);
		expect(child.steps).toEqual([]);
		expect(w.launchesOf(a)).toEqual([]);
	});
});

describe("a research that asks for a spec", () => {
	it("labels the epic needs-spec, asks its questions and creates no sub-issue", async () => {
		const { issue, runId } = await startEpic("Make it better");
		await w.finishTask(runId, 0, 1, {
			research: {
				text: needsSpecText(["Which reports?", "Which formats?"]),
				needsSpec: ["Which reports?", "Which formats?"],
			},
		});
		await w.settle();
		const run = await runOf(runId);
		expect(run.status).toBe("failed");
		expect(run.error).toMatch(/^the epic needs a spec: its research left 2 questions open/);
		expect(run.steps).toHaveLength(1);
		expect(w.linear.labelNames(issue.id)).toContain("needs-spec");
		const asked = w
			.comments(issue.id)
			.find((c) => c.startsWith("Lisa could not plan this epic yet"));
		expect(asked).toContain("- Which reports?\n- Which formats?");
		expect(subIssues(issue.id)).toEqual([]);
		expect(w.launchesOf(runId)).toHaveLength(1);
	});
});

describe("a forged plan report (the task is not trusted)", () => {
	it("is checked again: a cycle or an unknown repository fails the epic with the reasons", async () => {
		const { issue, runId } = await startEpic("Forged plan");
		await w.finishTask(runId, 0, 1, { research: { text: researchText() } });
		await w.settle();
		const plan = planOf([t("01", "api"), t("02", "web", "01")]);
		const forged: EpicPlan = {
			...plan,
			text: plan.text.replace("- 01: []", "- 01: [02]"),
			tasks: plan.tasks.map((x) =>
				x.id === "01"
					? {
							...x,
							body: x.body.replace("## Dependencies\n\nNone", "## Dependencies\n\n- 02"),
							dependsOn: ["02"],
						}
					: x,
			),
		};
		await w.finishTask(runId, 1, 1, { epicPlan: forged });
		await w.settle();
		const run = await runOf(runId);
		expect(run.status).toBe("failed");
		expect(run.error).toMatch(
			/^the epic's plan failed: the epic's plan is invalid: .*the dependencies form a cycle: 01 → 02 → 01/,
		);
		expect(subIssues(issue.id)).toEqual([]);
		expect((await w.timeline(runId)).some((e) => e.type === "plan.rejected")).toBe(true);
	});
});
