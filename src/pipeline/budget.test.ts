import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import type { Run } from "../domain/run";
import type { AttemptUsage } from "../domain/usage";
import { approveRequested, followUpRequested } from "../queue/messages";
import { handleFollowUpRequested } from "./follow-up";
import { handleRunRequested } from "./intake";
import { sweep } from "./sweeper";

// Budgets against a real store, queue and ECS double (docs/cost.md › Cost and budgets): a run past
// `limits.max_run_cost_usd` waits for approval instead of failing or spending on; a yes (the API's
// message, `/lisa continue`) launches what waited, once; an unanswered request expires; rounds
// count against their pull request's run; a spent day keeps new runs queued until it is raised.

const PR = "https://github.com/acme/api/pull/7";
let w: PipelineWorld;
beforeAll(async () => {
	w = await pipelineWorld({
		limits: "max_run_cost_usd: 5, approval_timeout_hours: 24",
		configExtra: "follow_up: {debounce_seconds: 0}\n",
	});
});
afterAll(() => w.stop());
afterEach(() => expect(w.unused()).toEqual([]));

/** An attempt whose agent reported `usd` (as Claude Code does, above its tokens' price). */
const spent = (usd: number): AttemptUsage => {
	const usage = {
		inputTokens: 1000,
		outputTokens: 100,
		cacheReadTokens: 0,
		cacheWriteTokens: 0,
		costUsd: usd,
	};
	return {
		runs: [{ model: "claude", servedModel: "claude-sonnet-4-5", ok: true, usage }],
		total: usage,
	};
};

async function started(title: string): Promise<{ runId: string; issueId: string }> {
	const issue = w.issue(title);
	const runId = w.deps.newRunId();
	await w.request(issue, runId);
	await w.settle();
	return { runId, issueId: issue.id };
}

const run = async (runId: string) => (await w.store.getRun(runId)) as Run;

describe("the run's cost limit", () => {
	it("pauses a run whose task stopped at the limit, and an approval launches the next attempt once", async () => {
		const { runId, issueId } = await started("Expensive");
		// The task learns the limit and what was spent at launch.
		expect((await run(runId)).steps[0]?.budget).toEqual({ limitUsd: 5, spentUsd: 0 });

		await w.finishTask(runId, 0, 1, {
			error: "stopped: the run's cost reached $5.20 of its $5.00 limit",
			usage: spent(5.2),
			budget: { spentUsd: 5.2, limitUsd: 5 },
		});
		await w.settle();
		const paused = await run(runId);
		expect(paused.status).toBe("awaiting_approval");
		expect(paused.approval).toMatchObject({
			spentUsd: 5.2,
			limitUsd: 5,
			proposedLimitUsd: 10.2,
			steps: [0],
			resume: "running",
			said: true,
		});
		expect(paused.steps[0]).toMatchObject({ status: "pending", attempt: 2 });
		expect(paused.steps[0]?.usage?.[0]?.cost).toMatchObject({ modelUsd: 5.2 });
		const asked = w.comments(issueId).at(-1) ?? "";
		expect(asked).toContain("spent $5.20 of its $5.00 limit");
		expect(asked).toContain("`/lisa continue`");
		expect(w.launchesOf(runId)).toHaveLength(1);

		// A sweep while it waits neither launches nor says it again.
		await sweep(w.deps);
		await w.settle();
		expect(w.launchesOf(runId)).toHaveLength(1);
		expect(w.comments(issueId).filter((c) => c.includes("/lisa continue"))).toHaveLength(1);

		const yes = approveRequested({
			runId,
			by: "api",
			via: "api",
			requestedAt: paused.approval?.requestedAt ?? "",
		});
		await w.deps.queue.send("events", yes);
		await w.deps.queue.send("events", yes); // SQS delivers at least once
		await w.settle();
		const resumed = await run(runId);
		expect(resumed.status).toBe("running");
		expect(resumed.limitUsd).toBe(10.2);
		expect(resumed.approvals).toEqual([
			expect.objectContaining({ by: "api", via: "api", limitUsd: 10.2, spentUsd: 5.2 }),
		]);
		expect(resumed.steps[0]).toMatchObject({
			status: "running",
			attempt: 2,
			budget: { limitUsd: 10.2, spentUsd: 5.2 },
		});
		expect(w.launchesOf(runId)).toEqual([
			{ step: 0, attempt: 1 },
			{ step: 0, attempt: 2 },
		]);

		// A late yes to the answered request, or one to a request never made, approves nothing.
		await w.deps.queue.send("events", yes);
		await w.deps.queue.send("events", { ...yes, requestedAt: "2026-01-01T00:00:00.000Z" });
		await w.settle();
		const notes = (await w.timeline(runId)).map((e) => e.type);
		expect(notes.filter((t) => t === "run.approved")).toHaveLength(1);
		expect(notes.filter((t) => t === "approval.ignored")).toHaveLength(1);
		expect(w.launchesOf(runId)).toHaveLength(2);

		await w.finishTask(runId, 0, 2, { prUrl: PR, branch: "feat/x", usage: spent(1) });
		await w.settle();
		const done = await run(runId);
		expect(done.status).toBe("succeeded");
		expect(done.steps[0]?.usage?.map((u) => u.cost?.modelUsd)).toEqual([5.2, 1]);
	});

	it("a transient failure past the limit waits instead of retrying, and fails when nobody answers", async () => {
		const { runId, issueId } = await started("Flaky and expensive");
		await w.finishTask(runId, 0, 1, { error: "rate limited", transient: true, usage: spent(6) });
		await w.settle();
		const paused = await run(runId);
		expect(paused.status).toBe("awaiting_approval");
		expect(paused.steps[0]).toMatchObject({ status: "pending", attempt: 2 });
		expect(w.launchesOf(runId)).toHaveLength(1);

		w.advance(23 * 3_600_000);
		await sweep(w.deps);
		expect((await run(runId)).status).toBe("awaiting_approval");
		w.advance(2 * 3_600_000);
		await sweep(w.deps);
		await w.settle();
		const failed = await run(runId);
		expect(failed.status).toBe("failed");
		expect(failed.error).toContain("nobody approved spending past $5.00 within 24 h");
		expect(failed.approval).toBeUndefined();
		expect(w.comments(issueId).at(-1)).toContain("nobody approved");
		expect(w.launchesOf(runId)).toHaveLength(1);
	});

	it("a `continue` in the run's Linear session approves its request once; other words do not", async () => {
		const { runId } = await started("Asked in the session");
		await w.finishTask(runId, 0, 1, {
			error: "stopped: the run's cost reached $5.10 of its $5.00 limit",
			usage: spent(5.1),
			budget: { spentUsd: 5.1, limitUsd: 5 },
		});
		await w.settle();
		expect((await run(runId)).status).toBe("awaiting_approval");
		// A member of the issue's team, as Linear tells when asked (docs/cost.md › Cost and budgets).
		const dana = w.linear.addUser({ name: "Dana" });
		const prompt = (activityId: string, body: string) =>
			w.deps.queue.send("events", {
				type: "session.prompted",
				runId,
				activityId,
				body,
				author: "Dana",
				authorId: dana.id,
				writtenAt: w.now().toISOString(),
				requestedAt: w.now().toISOString(),
			});

		await prompt("activity-1", "not yet, what did it spend on?");
		await w.settle();
		expect((await run(runId)).status).toBe("awaiting_approval");
		expect(w.launchesOf(runId)).toHaveLength(1);

		await prompt("activity-2", "continue");
		await prompt("activity-2", "continue"); // SQS delivers at least once
		await w.settle();
		const resumed = await run(runId);
		expect(resumed.status).toBe("running");
		expect(resumed.approvals).toEqual([
			expect.objectContaining({ by: "Dana", byId: dana.id, via: "linear", limitUsd: 10.1 }),
		]);
		expect(w.launchesOf(runId)).toEqual([
			{ step: 0, attempt: 1 },
			{ step: 0, attempt: 2 },
		]);
		await w.finishTask(runId, 0, 2, { prUrl: PR, branch: "feat/s", usage: spent(0.5) });
		await w.settle();
		expect((await run(runId)).status).toBe("succeeded");
	});
});

describe("follow-up rounds share their pull request's budget", () => {
	it("a round of a run that spent its limit waits; `/lisa continue` by a collaborator starts it, an outsider's does nothing", async () => {
		const { runId: parentId } = await started("Reviewed");
		await w.finishTask(parentId, 0, 1, { prUrl: PR, branch: "feat/x", usage: spent(5.5) });
		await w.settle();
		const parent = await run(parentId);
		expect(parent.status).toBe("succeeded");

		const request = await w.createRound(parent, PR, "feat/x");
		const roundId = request.runId as string;
		await w.store.updateRun(
			parent,
			{
				set: {
					followUps: {
						rounds: [{ runId: roundId, trigger: "mention", prUrl: PR, at: w.now().toISOString() }],
					},
				},
			},
			w.now().toISOString(),
		);
		await handleRunRequested(w.deps, request);
		const waiting = await run(roundId);
		expect(waiting.status).toBe("awaiting_approval");
		expect(waiting.approval).toMatchObject({ spentUsd: 5.5, limitUsd: 5, steps: [0] });
		expect(w.launchesOf(roundId)).toEqual([]);

		const say = (association: string, author: string) =>
			handleFollowUpRequested(
				w.deps,
				followUpRequested({
					runId: parentId,
					trigger: "mention",
					prUrl: PR,
					author,
					association,
					instruction: {
						id: `c-${author}`,
						author,
						body: "/lisa continue",
						via: "comment",
						writtenAt: w.now().toISOString(),
					},
					requestedAt: w.now().toISOString(),
				}),
			);
		expect(await say("NONE", "mallory")).toBe("ignore");
		await w.settle();
		expect((await run(roundId)).status).toBe("awaiting_approval");
		const refused = (await w.timeline(parentId)).find((e) => e.type === "approval.ignored");
		expect(refused?.message).toContain("mallory may not approve spending");

		expect(await say("COLLABORATOR", "dev")).toBe("ignore");
		await w.settle();
		const going = await run(roundId);
		expect(going.status).toBe("running");
		expect(going.approvals?.[0]).toMatchObject({ by: "dev", via: "github", limitUsd: 10.5 });
		expect(w.launchesOf(roundId)).toHaveLength(1);
		// The pull request's next rounds share the raised limit.
		expect((await run(parentId)).limitUsd).toBe(10.5);
		// No round was asked for: the comment was an approval.
		expect((await run(parentId)).followUps?.pending ?? []).toEqual([]);
	});
});

describe("the daily budget", () => {
	it("keeps new runs queued with the reason, and releases them when the budget is raised", async () => {
		const day = w.now().toISOString().slice(0, 10);
		const before = await w.store.spentOn(day);
		const limit = Math.floor(before.totalUsd) + 2;
		const { runId } = await started("Spends the day");
		await w.finishTask(runId, 0, 1, { prUrl: PR, branch: "feat/d", usage: spent(3) });
		await w.settle();
		expect((await w.store.spentOn(day)).totalUsd).toBeCloseTo(before.totalUsd + 3, 6);
		// A redelivered report never counts twice.
		await w.finishTask(runId, 0, 1, { prUrl: PR, branch: "feat/d", usage: spent(3) });
		await w.settle();
		expect((await w.store.spentOn(day)).totalUsd).toBeCloseTo(before.totalUsd + 3, 6);

		w.setConfig(`limits: {retry_backoff_seconds: 0, daily_budget_usd: ${limit}}`);
		const { runId: next, issueId } = await started("Waits for tomorrow");
		const queued = await run(next);
		expect(queued.status).toBe("queued");
		const why = (await w.timeline(next)).find((e) => e.type === "run.waiting")?.message;
		expect(why).toContain(`of the daily budget of $${limit}.00 (limits.daily_budget_usd)`);
		expect(w.comments(issueId).at(-1)).toContain("Lisa will start on this later");
		expect(w.launchesOf(next)).toEqual([]);
		// The sweeper asks again every pass: still spent, still queued, said once.
		w.advance(120_000);
		await sweep(w.deps);
		await w.settle();
		expect((await run(next)).status).toBe("queued");
		expect(w.comments(issueId).filter((c) => c.includes("later"))).toHaveLength(1);

		w.setConfig(`limits: {retry_backoff_seconds: 0, daily_budget_usd: ${limit + 10}}`);
		await sweep(w.deps);
		await w.settle();
		expect((await run(next)).status).toBe("running");
		expect(w.launchesOf(next)).toHaveLength(1);
	});

	it("starts a run the spent day kept queued once the next UTC day begins", async () => {
		const { runId } = await started("Spends today");
		await w.finishTask(runId, 0, 1, { prUrl: PR, branch: "feat/t", usage: spent(3) });
		await w.settle();
		w.setConfig("limits: {retry_backoff_seconds: 0, daily_budget_usd: 2}");
		const { runId: next } = await started("Waits for the next day");
		expect((await run(next)).status).toBe("queued");

		// One second before midnight UTC the day is still spent; one second after, a new day.
		const midnight = Math.ceil((w.now().getTime() + 1) / 86_400_000) * 86_400_000;
		w.advance(midnight - w.now().getTime() - 1000);
		await sweep(w.deps);
		await w.settle();
		expect((await run(next)).status).toBe("queued");
		w.advance(2000);
		await sweep(w.deps);
		await w.settle();
		expect((await run(next)).status).toBe("running");
		expect(w.launchesOf(next)).toHaveLength(1);
	});
});
