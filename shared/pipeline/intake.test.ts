import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { issueWebhook, linearHeaders } from "../../test/doubles/linear/webhook";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import { MAX_PROMPTS } from "../domain/session-prompts";
import { createApp } from "../http/app";
import type { RunRequested } from "../queue/messages";
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
		const msg: RunRequested = {
			type: "run.requested",
			source: "linear",
			issueId: issue.id,
			issueKey: issue.identifier,
			trigger: "api",
			requestedAt: w.now().toISOString(),
			runId,
		};
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

describe("a webhook delivery whose claim was left pending (issue 6c)", () => {
	it("is retried by the provider with the same run id, so it makes one run", async () => {
		const app = createApp(w.deps);
		const issue = w.issue("Delivered, then retried");
		const body = JSON.stringify(issueWebhook({ action: "create", issue, double: w.linear }));
		const headers = linearHeaders(body, w.settings.linear.webhookSecret ?? "", "delivery-6c");
		const post = () => app.request("/webhooks/linear", { method: "POST", body, headers });

		// The message is sent, then the process dies before marking the delivery queued.
		w.failDynamo((r) => r.command === "UpdateItemCommand" && r.json.includes("DELIVERY#linear"));
		const first = await post();
		expect(first.status).toBe(202);
		const { runId } = (await first.json()) as { runId: string };

		// Within a minute the claim counts as in flight: the retry is a duplicate.
		expect(await (await post()).json()).toEqual({ duplicate: true });
		// Later the provider's retry takes the stale claim over, with the claim's run id.
		w.advance(61_000);
		const retry = await post();
		expect(retry.status).toBe(202);
		expect(await retry.json()).toEqual({ runId });

		await w.settle();
		const runs = await w.store.runsOfIssue("linear", issue.id);
		expect(runs.map((r) => [r.runId, r.status])).toEqual([[runId, "running"]]);
		expect(w.launchesOf(runId)).toHaveLength(1);
		// The retry's claim was marked queued: a further retry is a duplicate.
		expect(await (await post()).json()).toEqual({ duplicate: true });
	});
});
