import { RunTaskCommand, StopTaskCommand } from "@aws-sdk/client-ecs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler as apiHandler } from "../../src/functions/api";
import { handler as eventsHandler } from "../../src/functions/events";
import { handler as intakeHandler } from "../../src/functions/intake";
import { stepFinished } from "../../src/queue/messages";
import { storeAndQueue } from "../../src/runtime/aws";
import { issueWebhook, linearHeaders } from "../doubles/linear/webhook";
import { CLUSTER, TASK_DEFINITION } from "../support/aws";
import {
	type ApiInit,
	callApi,
	jsonBody,
	type LambdaWorld,
	lambdaWorld,
	PUBLIC_URL,
} from "../support/lambda";
import { type ApiRun, WEBHOOK_SECRET } from "../support/world";

// The Lambda entry points with real event shapes. Configuration and secrets reach them the way SST
// links them (SST_RESOURCE_* read by SST's own Resource); crash.test.ts runs on plain variables.

let w: LambdaWorld;
beforeAll(async () => {
	w = await lambdaWorld({ style: "sst" });
	w.inject();
});
afterAll(() => w.stop());

const api = (method: string, path: string, init?: ApiInit) =>
	callApi(apiHandler, method, path, init);

describe("src/functions/api (HTTP API payload 2.0 through hono/aws-lambda)", () => {
	it("serves health, and the runs API only with the linked bearer token", async () => {
		const health = await api("GET", "/healthz", { token: null });
		expect(health.statusCode).toBe(200);
		expect(jsonBody(health)).toEqual({ ok: true });

		expect((await api("GET", "/api/runs", { token: null })).statusCode).toBe(401);
		expect((await api("GET", "/api/runs", { token: "wrong" })).statusCode).toBe(401);
		const list = await api("GET", "/api/runs?limit=5");
		expect(list.statusCode).toBe(200);
		expect(jsonBody(list)).toEqual({ runs: [], nextCursor: null });
		expect(list.headers?.["content-type"]).toMatch(/application\/json/);
	});

	it("rejects a webhook signed with another secret", async () => {
		const issue = w.linear.addIssue({ teamKey: "ENG", title: "Forged", labels: ["lisa"] });
		const body = JSON.stringify(issueWebhook({ action: "create", issue, double: w.linear }));
		const res = await api("POST", "/webhooks/linear", {
			token: null,
			body,
			headers: linearHeaders(body, "lin_whs_someone_else_0123456789"),
		});
		expect(res.statusCode).toBe(401);
	});
});

describe("webhook → intake → ECS → events, through the entry points", () => {
	let runId: string;
	let taskArn: string;

	it("accepts a signed Linear webhook and queues the run request", async () => {
		const issue = w.linear.addIssue({
			teamKey: "ENG",
			title: "Fix login redirect",
			state: "Todo",
			labels: ["lisa"],
		});
		const body = JSON.stringify(issueWebhook({ action: "create", issue, double: w.linear }));
		const res = await api("POST", "/webhooks/linear", {
			token: null,
			body,
			headers: linearHeaders(body, WEBHOOK_SECRET),
		});
		expect(res.statusCode).toBe(202);
		runId = jsonBody<{ runId: string }>(res).runId;
		expect(runId).toMatch(/^[0-9A-Z]{26}$/);
	});

	it("intake: plans the run and starts step 1 as an ECS task; a malformed record is dropped, not retried", async () => {
		const bad = await w.sendRaw("intake", '{"type":"run.requested","source":"jira"}');
		const { event, response } = await w.deliver("intake", intakeHandler);
		expect(event.Records.map((r) => r.messageId)).toContain(bad);
		expect(event.Records).toHaveLength(2);
		// It can never succeed: logged, deleted, never delivered again.
		expect(response).toEqual({ batchItemFailures: [] });

		const calls = w.ecs.mock.commandCalls(RunTaskCommand);
		expect(calls).toHaveLength(1);
		const input = calls[0]?.args[0].input;
		expect(input).toMatchObject({
			cluster: CLUSTER,
			taskDefinition: TASK_DEFINITION,
			capacityProviderStrategy: [{ capacityProvider: "FARGATE_SPOT", weight: 1 }],
			networkConfiguration: {
				awsvpcConfiguration: {
					subnets: ["subnet-0a1", "subnet-0b2"],
					securityGroups: ["sg-0c3"],
					assignPublicIp: "ENABLED",
				},
			},
			startedBy: `lisa-${runId}`,
		});
		const env = Object.fromEntries(
			(input?.overrides?.containerOverrides?.[0]?.environment ?? []).map((e) => [e.name, e.value]),
		);
		expect(env).toMatchObject({
			LISA_RUN_ID: runId,
			LISA_STEP_INDEX: "0",
			LISA_ATTEMPT: "1",
			LISA_TABLE_NAME: w.aws.settings.tableName,
			LISA_EVENTS_QUEUE_URL: w.aws.settings.eventsQueueUrl,
		});
		expect(Object.keys(env)).not.toContain("LINEAR_API_KEY");

		const run = jsonBody<ApiRun>(await api("GET", `/api/runs/${runId}`));
		expect(run.status).toBe("running");
		expect(run.steps[0]).toMatchObject({ status: "running", attempt: 1 });
		taskArn = run.steps[0]?.taskId ?? "";
		expect(taskArn).toMatch(/^arn:aws:ecs:eu-west-1:123456789012:task\/lisa-test-ClusterCluster\//);
		expect(run.links.dashboard).toBe(`${PUBLIC_URL}/runs/${runId}`);
		const issue = w.linear.state.issues.find((i) => i.title === "Fix login redirect");
		expect(issue && w.linear.stateName(issue)).toBe("In Progress");
	});

	it("events: the task's step.finished finishes the run and updates Linear; a bad record is dropped", async () => {
		// What the task sends when it is done (src/task/attempt/step.ts), through the same queue adapter.
		await storeAndQueue(w.aws.settings).queue.send(
			"events",
			stepFinished({
				runId,
				stepIndex: 0,
				attempt: 1,
				outcome: "succeeded",
				branch: "feat/eng-1-fix-login-redirect",
				prUrl: "https://github.com/acme/api/pull/7",
				provider: "claude",
			}),
		);
		const bad = await w.sendRaw("events", "{not json");
		const { event, response } = await w.deliver("events", eventsHandler);
		expect(event.Records.map((r) => r.messageId)).toContain(bad);
		expect(response.batchItemFailures).toEqual([]);

		const run = jsonBody<ApiRun>(await api("GET", `/api/runs/${runId}`));
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]?.prUrl).toBe("https://github.com/acme/api/pull/7");
		const issue = w.linear.state.issues.find((i) => i.title === "Fix login redirect");
		expect(issue && w.linear.stateName(issue)).toBe("In Review");
		const comment = w.linear.state.comments.filter((c) => c.issueId === issue?.id).at(-1);
		expect(comment?.body).toContain("https://github.com/acme/api/pull/7");
		expect(comment?.body).toContain(`${PUBLIC_URL}/runs/${runId}`);
	});

	it("a late step.finished for the finished run changes nothing", async () => {
		const commentsBefore = w.linear.state.comments.filter((c) => c.body.includes(runId)).length;
		const late = await w.sendRaw(
			"events",
			JSON.stringify({
				type: "step.finished",
				runId,
				stepIndex: 0,
				attempt: 1,
				outcome: "failed",
				error: "late duplicate",
			}),
		);
		const { event, response } = await w.deliver("events", eventsHandler);
		expect(event.Records.map((r) => r.messageId)).toContain(late);
		// Handled and deleted, not failed.
		expect(response.batchItemFailures.map((f) => f.itemIdentifier)).not.toContain(late);
		const run = jsonBody<ApiRun>(await api("GET", `/api/runs/${runId}`));
		expect(run.status).toBe("succeeded");
		expect(w.linear.state.comments.filter((c) => c.body.includes(runId))).toHaveLength(
			commentsBefore,
		);
	});

	it("streams the run and its timeline as one buffered event stream (API Gateway buffers)", async () => {
		const res = await api("GET", `/api/runs/${runId}/stream`);
		expect(res.statusCode).toBe(200);
		expect(res.headers?.["content-type"]).toMatch(/^text\/event-stream/);
		// hono/aws-lambda sends an event stream base64-encoded; API Gateway decodes it for the client.
		const body = Buffer.from(res.body ?? "", res.isBase64Encoded ? "base64" : "utf8").toString();
		const events = [...body.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
		expect(events[0]).toBe("run");
		expect(events).toContain("timeline");
		expect(events.at(-1)).toBe("end");
		expect(body).toMatch(/^retry: 2000$/m);
	});
});

describe("cancel through the API", () => {
	it("stops the run's ECS task with the reason and cancels the run", async () => {
		const issue = w.linear.addIssue({
			teamKey: "ENG",
			title: "Cancel me",
			state: "Todo",
			labels: ["lisa"],
		});
		const started = await api("POST", "/api/runs", { body: { issue: issue.identifier } });
		expect(started.statusCode).toBe(202);
		const { id } = jsonBody<{ id: string }>(started);
		await w.deliver("intake", intakeHandler);
		const running = jsonBody<ApiRun>(await api("GET", `/api/runs/${id}`));
		expect(running.status).toBe("running");
		const taskArn = running.steps[0]?.taskId;

		const cancel = await api("POST", `/api/runs/${id}/cancel`);
		expect(cancel.statusCode).toBe(202);
		await w.deliver("events", eventsHandler);

		expect(w.ecs.mock.commandCalls(StopTaskCommand).map((c) => c.args[0].input)).toEqual([
			{ cluster: CLUSTER, task: taskArn, reason: "run cancelled: cancelled through the API" },
		]);
		const run = jsonBody<ApiRun>(await api("GET", `/api/runs/${id}`));
		expect(run.status).toBe("cancelled");
		expect(run.steps[0]?.status).toBe("cancelled");
	});
});
