import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type PipelineWorld, pipelineWorld } from "../../test/support/pipeline";
import type { Run } from "../domain/run";
import { followUpRequested } from "../queue/messages";
import { handleFollowUpRequested } from "./follow-up";
import { handleRunRequested } from "./intake";

// The follow-up handlers against a real store and queue, delivered more than once and out of
// turn: an event is part of at most one round, a limit is said once, an outsider is refused with
// the reason, and a round waits for the issue's active run. (Gathering from GitHub and the rounds
// themselves: test/e2e/follow-ups.test.ts.)

const PR = "https://github.com/acme/api/pull/1";
let w: PipelineWorld;
beforeAll(async () => {
	w = await pipelineWorld({ configExtra: "follow_up: {debounce_seconds: 30, max_rounds: 1}\n" });
});
afterAll(() => w.stop());
afterEach(() => expect(w.unused()).toEqual([]));

/** A finished run whose step opened `PR`. */
async function parentRun(title: string): Promise<Run> {
	const issue = w.issue(title);
	const runId = w.deps.newRunId();
	await w.request(issue, runId);
	await w.settle();
	await w.finishTask(runId, 0, 1, { prUrl: PR, branch: "feat/x" });
	await w.settle();
	const run = await w.store.getRun(runId);
	expect(run?.status).toBe("succeeded");
	return run as Run;
}

const mention = (runId: string, id: string, association = "COLLABORATOR", author = "dev") =>
	followUpRequested({
		runId,
		trigger: "mention",
		prUrl: PR,
		author,
		association,
		instruction: { id, author, body: "@lisa handle the empty case", via: "comment" },
		requestedAt: w.now().toISOString(),
	});

describe("follow-up events", () => {
	it("index the pull request a run opened, so checks and comments find the run", async () => {
		const run = await parentRun("Indexed");
		expect(await w.store.runOfPullRequest(PR)).toBeDefined();
		// The first run to open a pull request keeps it: a second link changes nothing.
		await w.store.linkPullRequest(PR, run.runId);
		await w.store.linkPullRequest(PR, "01ANOTHERRUNXXXXXXXXXXXXXX");
		expect(await w.store.runOfPullRequest(PR)).not.toBe("01ANOTHERRUNXXXXXXXXXXXXXX");
	});

	it("a redelivered event is part of one pending round", async () => {
		const run = await parentRun("Mentioned twice");
		const msg = mention(run.runId, "comment-1");
		expect(await handleFollowUpRequested(w.deps, msg)).toBe("add");
		expect(await handleFollowUpRequested(w.deps, msg)).toBe("ignore");
		const after = await w.store.getRun(run.runId);
		expect(after?.followUps?.pending?.[0]).toMatchObject({
			trigger: "mention",
			instructions: [{ id: "comment-1" }],
		});
		expect(after?.followUps?.rounds).toEqual([]);
		const notes = (await w.timeline(run.runId)).filter((e) => e.type.startsWith("followup."));
		expect(notes.map((e) => e.type)).toEqual(["followup.requested", "followup.ignored"]);
		// Each handling sent the round's due message (a redelivery may follow a lost send): both
		// find the round not due yet and send it on.
		await w.settle();
		expect((await w.store.getRun(run.runId))?.followUps?.pending?.[0]?.runId).toBe(
			after?.followUps?.pending?.[0]?.runId,
		);
	});

	it("refuses an outsider with the reason on the timeline, and starts nothing", async () => {
		const run = await parentRun("Outsider");
		expect(
			await handleFollowUpRequested(w.deps, mention(run.runId, "c-9", "NONE", "mallory")),
		).toBe("ignore");
		expect((await w.store.getRun(run.runId))?.followUps).toBeUndefined();
		const ignored = (await w.timeline(run.runId)).find((e) => e.type === "followup.ignored");
		expect(ignored?.message).toMatch(/mallory \(NONE\) may not drive Lisa/);
	});

	it("says the round limit once, however many events come", async () => {
		const run = await parentRun("Limited");
		await w.store.updateRun(
			run,
			{
				set: {
					followUps: {
						rounds: [
							{
								runId: "01ROUNDXXXXXXXXXXXXXXXXXXX",
								trigger: "mention",
								prUrl: PR,
								at: run.createdAt,
							},
						],
					},
				},
			},
			w.now().toISOString(),
		);
		const results = await Promise.all([
			handleFollowUpRequested(w.deps, mention(run.runId, "c-1")),
			handleFollowUpRequested(w.deps, mention(run.runId, "c-2")),
		]);
		expect(results).toEqual(["limit", "limit"]);
		const after = await w.store.getRun(run.runId);
		expect(after?.followUps).toMatchObject({ limitSaid: true });
		expect(after?.followUps?.pending ?? []).toEqual([]);
		// Said on the issue once (the pull request's comment needs GitHub, which this world lacks).
		const said = w.comments(run.issueId).filter((c) => c.includes("stops following up"));
		expect(said).toHaveLength(1);
		expect(said[0]).toContain("follow_up.max_rounds: 1");
	});

	it("a round waits while another run of the issue is active, and says why", async () => {
		const parent = await parentRun("Busy issue");
		// Another run of the issue is working.
		const busy = w.deps.newRunId();
		await w.request({ id: parent.issueId, identifier: parent.issueKey ?? "" }, busy);
		await w.settle();
		expect((await w.store.getRun(busy))?.status).toBe("running");

		const request = await w.createRound(parent, PR, "feat/x");
		const roundId = request.runId as string;
		await handleRunRequested(w.deps, request);
		const queued = await w.store.getRun(roundId);
		expect(queued?.status).toBe("queued");
		expect((await w.timeline(roundId)).find((e) => e.type === "run.waiting")?.message).toContain(
			`waiting for run ${busy}`,
		);

		// The busy run ends; the round starts on the pull request's branch, without moving the issue.
		await w.finishTask(busy, 0, 1, {
			prUrl: "https://github.com/acme/api/pull/2",
			branch: "feat/y",
		});
		await w.settle();
		await handleRunRequested(w.deps, request);
		const started = await w.store.getRun(roundId);
		expect(started?.status).toBe("running");
		expect(started?.steps[0]).toMatchObject({ repo: "api", branch: "feat/x", prUrl: PR });
		expect(w.launchesOf(roundId)).toHaveLength(1);
		const moves = (await w.timeline(roundId)).filter((e) => e.type === "tracker.moved");
		expect(moves).toEqual([]);
	});
});
