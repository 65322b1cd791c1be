import { DescribeTasksCommand, RunTaskCommand } from "@aws-sdk/client-ecs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler as apiHandler } from "../../src/functions/api";
import { handler as ecsEventsHandler } from "../../src/functions/ecs-events";
import { handler as intakeHandler } from "../../src/functions/intake";
import { handler as sweeperHandler } from "../../src/functions/sweeper";
import { storeAndQueue } from "../../src/runtime/aws";
import {
	type ApiInit,
	callApi,
	jsonBody,
	type LambdaWorld,
	lambdaWorld,
	taskStateChange,
} from "../support/lambda";
import type { ApiRun } from "../support/world";

// Crash detection in AWS (src/functions/ecs-events, the sweeper as backstop;
// docs/how-a-run-works.md › How a run works): a task that stops without having reported is retried
// like a transient failure up to max_attempts, then the run fails with ECS's stop reason in the API
// and in Linear. The handlers read plain variables here.

let w: LambdaWorld;

beforeAll(async () => {
	w = await lambdaWorld({
		style: "plain",
		configExtra: "limits: {max_attempts: 2, retry_backoff_seconds: 0}",
	});
	w.inject();
});
afterAll(() => w.stop());

const api = (method: string, path: string, init?: ApiInit) =>
	callApi(apiHandler, method, path, init);
const getRun = async (id: string) => jsonBody<ApiRun>(await api("GET", `/api/runs/${id}`));
const timeline = async (id: string) =>
	jsonBody<{ events: { type: string; message: string }[] }>(
		await api("GET", `/api/runs/${id}/events`),
	).events;
const runTaskInputs = () => w.ecs.mock.commandCalls(RunTaskCommand).map((c) => c.args[0].input);

/** An issue, a run for it through the API, and intake's launch of its first task. */
async function runningRun(title: string) {
	const issue = w.linear.addIssue({ teamKey: "ENG", title, state: "Todo", labels: ["lisa"] });
	const res = await api("POST", "/api/runs", { body: { issue: issue.identifier } });
	const { id } = jsonBody<{ id: string }>(res);
	await w.deliver("intake", intakeHandler);
	const run = await getRun(id);
	expect(run.status).toBe("running");
	return { issue, id, taskArn: run.steps[0]?.taskId ?? "" };
}

const oom = {
	stopCode: "EssentialContainerExited",
	stoppedReason: "Essential container in task exited",
	exitCode: 137,
	containerReason: "OutOfMemoryError: Container killed due to memory usage",
};

describe("a task that stops without reporting", () => {
	it("is retried on regular Fargate after an OOM kill, then fails the run on a non-zero exit", async () => {
		const { issue, id, taskArn } = await runningRun("Crash twice");
		expect(runTaskInputs().at(-1)?.capacityProviderStrategy).toEqual([
			{ capacityProvider: "FARGATE_SPOT", weight: 1 },
		]);

		const first = taskStateChange({ taskArn, runId: id, stepIndex: 0, attempt: 1, ...oom });
		const out = await ecsEventsHandler(first);
		expect(out).toMatchObject({ handled: true, runId: id, stepIndex: 0, attempt: 1 });

		const retried = runTaskInputs().at(-1);
		expect(retried?.capacityProviderStrategy).toEqual([{ capacityProvider: "FARGATE", weight: 1 }]);
		expect(retried?.clientToken).toBe(`${id}-0-2`);
		let run = await getRun(id);
		expect(run.status).toBe("running");
		expect(run.steps[0]).toMatchObject({ status: "running", attempt: 2 });
		expect(run.steps[0]?.taskId).not.toBe(taskArn);
		expect(run.steps[0]?.error).toBe(
			"attempt 1: the agent task stopped without reporting a result: EssentialContainerExited: Essential container in task exited; container Agent: exit code 137, OutOfMemoryError: Container killed due to memory usage",
		);

		// EventBridge delivers at least once: the same event again changes nothing.
		const launches = runTaskInputs().length;
		expect(await ecsEventsHandler(first)).toMatchObject({ handled: false });
		expect(runTaskInputs()).toHaveLength(launches);

		const second = taskStateChange({
			taskArn: run.steps[0]?.taskId ?? "",
			runId: id,
			stepIndex: 0,
			attempt: 2,
			stopCode: "EssentialContainerExited",
			stoppedReason: "Essential container in task exited",
			exitCode: 1,
		});
		expect(await ecsEventsHandler(second)).toMatchObject({ handled: true, attempt: 2 });
		expect(runTaskInputs()).toHaveLength(launches);

		run = await getRun(id);
		const reason =
			"the agent task stopped without reporting a result: EssentialContainerExited: Essential container in task exited; container Agent: exit code 1";
		expect(run.status).toBe("failed");
		expect(run.error).toBe(reason);
		expect(run.steps[0]).toMatchObject({ status: "failed", attempt: 2, error: reason });
		const events = await timeline(id);
		expect(events.filter((e) => e.type === "step.crashed")).toHaveLength(2);
		expect(events.filter((e) => e.type === "step.retry")).toHaveLength(1);
		expect(events.map((e) => e.type)).toContain("run.failed");

		// The tracker: a comment with the reason, and the issue back where it was picked from.
		// The start comment, then exactly one comment with the outcome.
		const comments = w.linear.state.comments.filter((c) => c.issueId === issue.id);
		expect(comments.map((c) => c.body.split("\n")[0])).toEqual([
			expect.stringMatching(/^Lisa is working on this issue/),
			`Lisa could not resolve this issue: ${reason}`,
		]);
		expect(w.linear.stateName(issue)).toBe("Todo");
	});

	it("treats a Spot reclaim and an image that cannot be pulled like crashes", async () => {
		const { issue, id, taskArn } = await runningRun("Unlucky capacity");
		await ecsEventsHandler(
			taskStateChange({
				taskArn,
				runId: id,
				stepIndex: 0,
				attempt: 1,
				stopCode: "SpotInterruption",
				stoppedReason: "Your Spot Task was interrupted.",
			}),
		);
		let run = await getRun(id);
		expect(run.steps[0]).toMatchObject({
			attempt: 2,
			error:
				"attempt 1: the agent task stopped without reporting a result: SpotInterruption: Your Spot Task was interrupted.",
		});
		await ecsEventsHandler(
			taskStateChange({
				taskArn: run.steps[0]?.taskId ?? "",
				runId: id,
				stepIndex: 0,
				attempt: 2,
				stopCode: "TaskFailedToStart",
				stoppedReason:
					"CannotPullContainerError: pull image manifest has been retried 5 time(s): manifest unknown",
			}),
		);
		run = await getRun(id);
		expect(run.status).toBe("failed");
		expect(run.error).toContain("TaskFailedToStart: CannotPullContainerError");
		const comment = w.linear.state.comments.filter((c) => c.issueId === issue.id).at(-1);
		expect(comment?.body).toContain("CannotPullContainerError");
	});

	it("finds the run's step from startedBy and the recorded task when the overrides are missing", async () => {
		const { id, taskArn } = await runningRun("No overrides in the event");
		const out = await ecsEventsHandler(
			taskStateChange({ taskArn, runId: id, stepIndex: 0, attempt: 1, ...oom, withoutEnv: true }),
		);
		expect(out).toMatchObject({ handled: true, runId: id, stepIndex: 0, attempt: 1 });
		expect((await getRun(id)).steps[0]?.attempt).toBe(2);
	});
});

describe("stops that are not crashes", () => {
	it("ignores a task that stored its report, other tasks, other states and old attempts", async () => {
		const { id, taskArn } = await runningRun("Finishes normally");
		const launches = runTaskInputs().length;
		const ref = { taskArn, runId: id, stepIndex: 0, attempt: 1 };

		expect(await ecsEventsHandler(taskStateChange({ ...ref, lastStatus: "RUNNING" }))).toEqual({
			handled: false,
			ignored: "task is RUNNING",
		});
		expect(await ecsEventsHandler(taskStateChange({ ...ref, attempt: 3, ...oom }))).toEqual({
			handled: false,
			ignored: "task ran attempt 3; the step is on attempt 1",
		});
		const foreign = taskStateChange({ ...ref, ...oom, withoutEnv: true });
		foreign.detail.startedBy = "ecs-svc/1234567890";
		expect(await ecsEventsHandler(foreign)).toEqual({
			handled: false,
			ignored: `task ${taskArn} was not started by Lisa`,
		});
		expect(
			await ecsEventsHandler({
				...taskStateChange(ref),
				"detail-type": "ECS Container Instance State Change",
			}),
		).toMatchObject({ handled: false });

		// The task stores its report, then sends step.finished, then exits: its STOPPED event comes
		// while the message is on its way.
		const { store } = storeAndQueue(w.aws.settings);
		await store.updateStepFields(id, 0, 1, {
			report: {
				attempt: 1,
				outcome: "succeeded",
				prUrl: "https://github.com/acme/api/pull/9",
				at: new Date().toISOString(),
			},
		});
		expect(
			await ecsEventsHandler(
				taskStateChange({
					...ref,
					stopCode: "EssentialContainerExited",
					stoppedReason: "Essential container in task exited",
					exitCode: 0,
				}),
			),
		).toEqual({ handled: false, ignored: "the task reported its result" });

		expect(runTaskInputs()).toHaveLength(launches);
		const run = await getRun(id);
		expect(run.status).toBe("running");
		expect(run.steps[0]).toMatchObject({ status: "running", attempt: 1 });
	});
});

describe("the sweeper as a backstop", () => {
	it("retries a step whose task ECS reports stopped when the event was lost, with ECS's reason", async () => {
		const { id, taskArn } = await runningRun("Event lost");
		w.ecs.tasks.set(taskArn, {
			lastStatus: "STOPPED",
			stopCode: oom.stopCode,
			stoppedReason: oom.stoppedReason,
			containers: [{ name: "Agent", exitCode: oom.exitCode, reason: oom.containerReason }],
		});
		const report = await sweeperHandler();
		expect(report.lost).toBe(1);
		const run = await getRun(id);
		expect(run.steps[0]).toMatchObject({ status: "running", attempt: 2 });
		expect(run.steps[0]?.error).toBe(
			`attempt 1: the agent task ${taskArn} stopped without reporting a result: EssentialContainerExited: Essential container in task exited; container Agent: exit code 137, OutOfMemoryError: Container killed due to memory usage`,
		);
		expect(
			w.ecs.mock
				.commandCalls(DescribeTasksCommand)
				.some((c) => c.args[0].input.tasks?.includes(taskArn)),
		).toBe(true);
	});
});
