import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { type RunRequested, runRequestedSchema } from "../../src/queue/messages";
import { awsClients } from "../../src/runtime/aws";
import { issueWebhook, linearHeaders } from "../doubles/linear/webhook";
import { type PipelineWorld, pipelineWorld } from "../support/pipeline";

// A signed Linear webhook for an issue labelled `epic.label` becomes `run.requested` with kind
// "epic" on the real intake queue (docs/epics.md › Epics); the intake is not polled, so the message
// is read as SQS holds it.

let pipe: PipelineWorld;
beforeAll(async () => {
	pipe = await pipelineWorld();
}, 120_000);
afterAll(() => pipe?.stop());

/** Every `run.requested` waiting on the intake queue, taken off it. */
async function intakeMessages(): Promise<RunRequested[]> {
	const { sqs } = awsClients(pipe.settings);
	const out: RunRequested[] = [];
	for (;;) {
		const res = await sqs.send(
			new ReceiveMessageCommand({
				QueueUrl: pipe.settings.intakeQueueUrl,
				MaxNumberOfMessages: 10,
			}),
		);
		if (!res.Messages?.length) return out;
		for (const m of res.Messages) {
			out.push(runRequestedSchema.parse(JSON.parse(m.Body ?? "")));
			await sqs.send(
				new DeleteMessageCommand({
					QueueUrl: pipe.settings.intakeQueueUrl,
					ReceiptHandle: m.ReceiptHandle,
				}),
			);
		}
	}
}

async function created(labels: string[]) {
	const app = createApp(pipe.deps);
	const issue = pipe.linear.addIssue({
		teamKey: "ENG",
		title: labels.join(" "),
		state: "Todo",
		labels,
	});
	const body = JSON.stringify(issueWebhook({ action: "create", issue, double: pipe.linear }));
	const res = await app.request("/webhooks/linear", {
		method: "POST",
		body,
		headers: linearHeaders(body, pipe.settings.linear.webhookSecret ?? ""),
	});
	return { issue, status: res.status, answer: (await res.json()) as Record<string, unknown> };
}

describe("the epic label on a webhook", () => {
	it("queues an epic run for the epic label (with or without the trigger label), a plain run otherwise", async () => {
		const epic = await created(["lisa-epic"]);
		const both = await created(["lisa", "lisa-epic"]);
		const plain = await created(["lisa"]);
		for (const r of [epic, both, plain]) expect(r.status).toBe(202);
		const queued = await intakeMessages();
		const byIssue = (id: string) => queued.find((m) => m.issueId === id);
		expect(byIssue(epic.issue.id)).toMatchObject({ kind: "epic", runId: epic.answer.runId });
		expect(byIssue(both.issue.id)).toMatchObject({ kind: "epic", runId: both.answer.runId });
		expect(byIssue(plain.issue.id)).toMatchObject({ runId: plain.answer.runId });
		expect(byIssue(plain.issue.id)).not.toHaveProperty("kind");
	});

	it("queues nothing for an epic that waits for its spec, or for another label", async () => {
		const waiting = await created(["lisa-epic", "needs-spec"]);
		expect(waiting).toMatchObject({
			status: 200,
			answer: {
				ignored:
					'the epic waits: it carries "needs-spec": answer the questions in its description, then remove the label',
			},
		});
		const other = await created(["epic"]);
		expect(other).toMatchObject({
			status: 200,
			answer: { ignored: 'created without label "lisa"' },
		});
		expect(await intakeMessages()).toEqual([]);
	});
});
