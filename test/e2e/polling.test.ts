import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoopContext, pollLoop, type RunOptions } from "../../src/cli/run";
import type { LisaConfig } from "../../src/config/schema";
import { recoverOrphans } from "../../src/pipeline/poll";
import { createStackWorld, type StackWorld } from "../support/stack";

// Polling mode on the local stack: the loop `lisa run` drives, against the Linear double.

let w: StackWorld;
let config: LisaConfig;
beforeAll(async () => {
	w = await createStackWorld({ configExtra: "limits: {max_attempts: 1}" });
	const state = w.stack?.deps.config();
	if (state?.status !== "ok") throw new Error("no config");
	config = state.config;
});
afterAll(() => w.stop());

const OPTS: RunOptions = {
	once: false,
	watch: false,
	limit: 0,
	dryRun: false,
	intervalSeconds: 30,
};

function loop(opts: Partial<RunOptions>, signal = new AbortController().signal) {
	const stack = w.stack;
	if (!stack) throw new Error("no stack");
	const lines: string[] = [];
	const ctx: LoopContext = {
		deps: stack.deps,
		config,
		print: (l) => lines.push(l),
		signal,
	};
	return { lines, done: pollLoop(ctx, { ...OPTS, ...opts }) };
}

const inProgress = (title: string, labels = ["lisa"]) =>
	w.linear.addIssue({ teamKey: "ENG", title, state: "In Progress", labels });

describe("polling mode", () => {
	it("orphan recovery returns labelled in-progress issues without an active run to pick_from", async () => {
		const busy = w.issue("Busy elsewhere", "lisa-fake: sleep=3");
		const res = await w.sendWebhook(w.createdWebhook(busy));
		const { runId } = (await res.json()) as { runId: string };
		await w.waitForRun(runId, (r) => r.steps[0]?.status === "running");
		const orphan = inProgress("Left behind by a dead run");
		const foreign = inProgress("Someone else's work", ["bug"]);

		const stack = w.stack;
		if (!stack) throw new Error("no stack");
		const recovered = await recoverOrphans(stack.deps, config);
		expect(recovered.map((i) => i.key)).toEqual([orphan.identifier]);
		expect(w.linear.stateName(orphan)).toBe("Todo");
		expect(w.linear.stateName(busy)).toBe("In Progress");
		expect(w.linear.stateName(foreign)).toBe("In Progress");
		await w.waitForRun(runId);
		// Lisa's orphan is back in the queue: the loops below pick it up (it has no priority: last).
	});

	it("--once takes the most urgent unblocked issue and runs it through the intake queue", async () => {
		const blocker = w.issue("Migrate the database first", "", []);
		const blocked = w.linear.addIssue({
			teamKey: "ENG",
			title: "Urgent but blocked",
			state: "Todo",
			labels: ["lisa"],
			priority: 1,
		});
		w.linear.addRelation(blocker.identifier, "blocks", blocked.identifier);
		const high = w.linear.addIssue({
			teamKey: "ENG",
			title: "High priority",
			state: "Todo",
			labels: ["lisa"],
			priority: 2,
		});
		w.linear.addIssue({
			teamKey: "ENG",
			title: "Not labelled",
			state: "Todo",
			labels: ["bug"],
			priority: 1,
		});

		const { lines, done } = loop({ once: true });
		const result = await done;
		expect(result.runs).toEqual([
			{ runId: expect.any(String), issue: high.identifier, status: "succeeded" },
		]);
		const run = await w.waitForRun(result.runs[0]?.runId as string);
		expect(run).toMatchObject({ trigger: "poll", issueId: high.id, status: "succeeded" });
		expect(w.linear.stateName(high)).toBe("In Review");
		expect(lines).toContain(
			`Session 1: ${high.identifier} "High priority" → run ${run.id} (${run.links.dashboard})`,
		);
		expect(lines).toContain(`  succeeded: ${run.prUrls[0]}`);
		const events = await w.api<{ events: { type: string; message: string }[] }>(
			`/api/runs/${run.id}/events`,
		);
		expect(events.body.events[0]).toMatchObject({
			type: "run.requested",
			message: `run requested by poll for ${high.identifier}`,
		});
		expect(w.linear.stateName(blocked)).toBe("Todo");
	});

	it("--limit stops after N issues; without --watch the loop stops when nothing is left", async () => {
		const first = loop({ limit: 1 });
		const one = await first.done;
		expect(one.runs.map((r) => r.status)).toEqual(["succeeded"]);
		expect(one.runs[0]?.issue).toMatch(/^ENG-/);
		expect(first.lines.at(-1)).toBe("Reached --limit 1. Done.");

		// Only the blocked issue is left.
		const rest = loop({});
		expect((await rest.done).runs).toEqual([]);
		expect(rest.lines.at(-1)).toBe(`No more issues with label 'lisa' in "Todo". Done.`);
	});

	it("--issue runs that issue even when the queue would skip it", async () => {
		const blocked = w.linear.state.issues.find((i) => i.title === "Urgent but blocked");
		if (!blocked) throw new Error("no issue");
		const { done } = loop({
			issue: `https://linear.app/acme/issue/${blocked.identifier}/urgent-but-blocked`,
		});
		const result = await done;
		expect(result.runs).toEqual([
			{ runId: expect.any(String), issue: blocked.identifier, status: "succeeded" },
		]);
		expect(w.linear.stateName(blocked)).toBe("In Review");
	});

	it("--watch keeps polling until an issue appears", async () => {
		const polls = () =>
			w.linear.requests.filter((r) => r.operationName === "LisaNextIssues").length;
		const before = polls();
		const { lines, done } = loop({ watch: true, limit: 1, intervalSeconds: 0.2 });
		// Once the loop has found the queue empty, a person labels an issue.
		while (polls() < before + 2) await new Promise((r) => setTimeout(r, 50));
		const late = w.issue("Arrives later");
		const result = await done;
		expect(result.runs).toEqual([
			{ runId: expect.any(String), issue: late.identifier, status: "succeeded" },
		]);
		expect(lines.at(-1)).toBe("Reached --limit 1. Done.");
	});

	it("an interrupt cancels the active run and returns its issue to pick_from", async () => {
		const slow = w.issue("Interrupted", "lisa-fake: sleep=60");
		const controller = new AbortController();
		const { lines, done } = loop({ once: true }, controller.signal);
		const runId = await (async () => {
			for (;;) {
				const run = (await w.stack?.deps.store.runsOfIssue("linear", slow.id))?.[0];
				if (run?.steps[0]?.status === "running") return run.runId;
				await new Promise((r) => setTimeout(r, 200));
			}
		})();
		controller.abort();
		const result = await done;
		expect(result.runs).toEqual([{ runId, issue: slow.identifier, status: "cancelled" }]);
		const run = await w.waitForRun(runId);
		expect(run).toMatchObject({ status: "cancelled", error: "lisa run was interrupted" });
		expect(w.linear.stateName(slow)).toBe("Todo");
		expect(lines).toContain(
			`Interrupted: cancelling run ${runId} (the issue goes back to "Todo")…`,
		);
	});
});
