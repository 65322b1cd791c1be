import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { issueWebhook, linearHeaders } from "../../test/doubles/linear/webhook";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import { deliveryKey } from "../api/accept";
import { createApp } from "../api/app";
import { MAX_PROMPTS } from "../domain/session-prompts";
import { runRequested } from "../queue/messages";
import { handleRunRequested } from "./intake";

// Requests that arrive more than once, or together: every one of them starts at most one run,
// posts at most one start comment, and a run's item stays bounded.

let w: PipelineWorld;
beforeAll(async () => {
	w = await pipelineWorld();
});
afterAll(() => w.stop());
afterEach(() => expect(w.unused()).toEqual([]));

describe("two intakes of one run at once (issue 6a)", () => {
	it("post one start comment and launch one task", async () => {
		const issue = w.issue("Requested twice");
		const runId = w.deps.newRunId();
		const msg = runRequested({
			source: "linear",
			issueId: issue.id,
			issueKey: issue.identifier,
			trigger: "api",
			requestedAt: w.now().toISOString(),
			runId,
		});
		// The first intake is posting its start comment when the second (a redelivery, a re-drive)
		// runs from start to end.
		const posting = w.gate.hold(/mutation createComment/);
		const first = handleRunRequested(w.deps, msg);
		await posting.held;
		await handleRunRequested(w.deps, msg);
		posting.release();
		await first;

		expect(w.comments(issue.id).map((c) => c.split("\n")[0])).toEqual([
			expect.stringMatching(/^Lisa is working on this issue/),
		]);
		expect(w.launchesOf(runId)).toHaveLength(1);
		expect((await w.store.getRun(runId))?.steps[0]?.status).toBe("running");
	});
});

describe("follow-ups in a run's agent session (issue 6b)", () => {
	it("keep the newest on the run and count the rest", async () => {
		const issue = w.issue("Chatty session");
		const runId = w.deps.newRunId();
		await w.request(issue, runId);
		await w.settle();
		const at = (i: number) => new Date(w.now().getTime() + i * 1000).toISOString();
		const prompt = async (i: number) => {
			await w.deps.queue.send("events", {
				type: "session.prompted",
				runId,
				activityId: `activity-${i}`,
				body: `follow-up ${i} ${"x".repeat(3000)}`,
				requestedAt: at(i),
			});
			expect(await w.deliver("events")).toMatchObject({ handled: 1, failed: 0 });
		};
		for (let i = 1; i <= MAX_PROMPTS + 5; i++) await prompt(i);
		let run = await w.store.getRun(runId);
		expect(run?.prompts).toHaveLength(MAX_PROMPTS);
		expect(run?.prompts?.[0]?.id).toBe("activity-6");
		expect(run?.prompts?.at(-1)?.id).toBe(`activity-${MAX_PROMPTS + 5}`);
		expect(run?.promptsDropped).toBe(5);
		// A redelivered follow-up, kept or dropped, changes nothing.
		await prompt(3);
		await prompt(MAX_PROMPTS);
		run = await w.store.getRun(runId);
		expect(run?.promptsDropped).toBe(5);
		expect(run?.prompts?.map((p) => p.id)).toHaveLength(MAX_PROMPTS);
		expect((await w.timeline(runId)).filter((e) => e.type === "session.prompted")).toHaveLength(
			MAX_PROMPTS + 5,
		);
	});
});

describe("a webhook delivery whose claim was left behind (issue 6c)", () => {
	const delivery = (title: string) => {
		const app = createApp(w.deps);
		const issue = w.issue(title);
		const body = JSON.stringify(issueWebhook({ action: "create", issue, double: w.linear }));
		const headers = linearHeaders(body, w.settings.linear.webhookSecret ?? "");
		const post = () => app.request("/webhooks/linear", { method: "POST", body, headers });
		return { issue, post, key: deliveryKey(Buffer.from(body)) };
	};

	it("is sent again with the claim's run id when the process died between the claim and the send", async () => {
		const { issue, post, key } = delivery("Claimed, never sent");
		// The claim is written, then the process dies before it sends the message.
		w.afterDynamo(
			(r) => r.command === "PutItemCommand" && r.json.includes("DELIVERY#linear"),
			async () => {
				throw new Error("Task timed out after 30.00 seconds");
			},
		);
		expect((await post()).status).toBe(500);
		const claim = await w.store.deliveryClaim("linear", key, w.now().getTime());
		expect(claim?.runId).toMatch(/^[0-9A-Z]{26}$/);

		// Within a minute the claim counts as in flight: the retry is a duplicate.
		expect(await (await post()).json()).toEqual({ duplicate: true });
		// Later the provider's retry finds no run for the claim and sends it, with the claim's id.
		w.advance(61_000);
		const retry = await post();
		expect(retry.status).toBe(202);
		expect(await retry.json()).toEqual({ runId: claim?.runId });

		await w.settle();
		const runs = await w.store.runsOfIssue("linear", issue.id);
		expect(runs.map((r) => [r.runId, r.status])).toEqual([[claim?.runId, "running"]]);
		expect(w.launchesOf(claim?.runId ?? "")).toHaveLength(1);
		// Its run exists: a further retry is a duplicate.
		w.advance(61_000);
		expect(await (await post()).json()).toEqual({ duplicate: true });
	});

	it("makes one run when the message was sent but the answer was lost", async () => {
		const { issue, post } = delivery("Sent, answer lost");
		const first = await post();
		expect(first.status).toBe(202);
		const { runId } = (await first.json()) as { runId: string };
		// The tracker retries after a minute, before the intake took the message: it is sent again
		// with the same run id, and the intake makes one run of the two messages.
		w.advance(61_000);
		const retry = await post();
		expect(retry.status).toBe(202);
		expect(await retry.json()).toEqual({ runId });
		await w.settle();
		const runs = await w.store.runsOfIssue("linear", issue.id);
		expect(runs.map((r) => r.runId)).toEqual([runId]);
		expect(w.launchesOf(runId)).toHaveLength(1);
		expect(w.comments(issue.id)).toHaveLength(1);
	});

	it("gives the claim back when the send fails, so the tracker's retry is accepted", async () => {
		const { issue, post, key } = delivery("Queue down");
		const send = w.deps.queue.send;
		w.deps.queue.send = async () => {
			throw new Error("connect ECONNREFUSED");
		};
		try {
			const refused = await post();
			expect(refused.status).toBe(503);
		} finally {
			w.deps.queue.send = send;
		}
		expect(await w.store.deliveryClaim("linear", key, w.now().getTime())).toBeUndefined();
		const retry = await post();
		expect(retry.status).toBe(202);
		await w.settle();
		expect(await w.store.runsOfIssue("linear", issue.id)).toHaveLength(1);
	});
});
