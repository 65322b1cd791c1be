import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitHubIssue, GitHubPull } from "../doubles/github/server";
import type { CheckSpec } from "../doubles/github/state";
import { checkRunEvent, checkSuiteEvent, issuesEvent } from "../doubles/github/webhook";
import { createStackWorld, type StackWorld } from "../support/stack";
import type { ApiRun } from "../support/world";

// Red CI on Lisa's pull requests, end to end on the local stack (docs/follow-ups.md › Follow-ups):
// a failing commit makes one round that pushes to the same PR; several failing checks of one commit
// make one round; the same failure after a round stops CI rounds with a comment.

const REPO = "acme/api";
const human = "ada";
let w: StackWorld;

beforeAll(async () => {
	w = await createStackWorld({
		source: "github",
		configExtra: "limits: {max_attempts: 1}\nfollow_up: {debounce_seconds: 1}\n",
	});
});
afterAll(() => w.stop());

const send = async (event: string, payload: unknown) => {
	const res = await w.sendGitHub(event, payload);
	return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const pullOf = (runId: string) =>
	w.github.pulls(REPO).find((p) => p.body?.includes(runId)) as GitHubPull;
const pullNow = (n: number) => w.github.pulls(REPO).find((p) => p.number === n) as GitHubPull;
const prComments = (n: number) => w.github.comments(REPO, n).map((c) => c.body ?? "");

/** An issue resolved by a run: the run and its open pull request. */
async function resolved(
	title: string,
): Promise<{ issue: GitHubIssue; run: ApiRun; pull: GitHubPull }> {
	const issue = w.github.addIssue(REPO, {
		title,
		body: "Make it work.",
		labels: ["lisa"],
		user: human,
	});
	const res = await send(
		"issues",
		issuesEvent(w.github, REPO, issue, { label: "lisa", sender: human }),
	);
	expect(res.status).toBe(202);
	const run = await w.waitForRun(res.body.runId as string);
	expect(run.status).toBe("succeeded");
	return { issue, run, pull: pullOf(run.id) };
}

/** The run once `done` holds, re-read from the API (a run's rounds are on it). */
const parentWhen = (id: string, done: (r: ApiRun) => boolean) => w.waitForRun(id, done, 90_000);
const followUps = (r: ApiRun) =>
	(r as unknown as { followUps: { runId: string; status?: string }[] }).followUps;
const pendings = (r: ApiRun) =>
	(r as unknown as { pendingFollowUps: unknown[] }).pendingFollowUps.length;
const roundsDone = (n: number) => (r: ApiRun) =>
	followUps(r).length === n &&
	followUps(r).every((f) => ["succeeded", "failed", "cancelled"].includes(f.status ?? ""));

const failing = (name: string, error: string, at = "2026-11-24T10:00:00.000Z"): CheckSpec => ({
	name,
	conclusion: "failure",
	output: { title: `${name} failed`, summary: "1 failed" },
	log: `${at} Run npm test\n${at} FAIL src/sum.test.ts > sums the empty list\n${at} Error: ${error}\n${at} ##[error]Process completed with exit code 1.`,
});

/** Polls until `get` returns something (the effects after a state change land moments later). */
async function until<T>(get: () => T | undefined, timeoutMs = 30_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const got = get();
		if (got) return got;
		if (Date.now() > deadline) throw new Error("timed out waiting");
		await new Promise((r) => setTimeout(r, 100));
	}
}

async function events(runId: string): Promise<{ type: string; message: string }[]> {
	const { body } = await w.api<{ events: { type: string; message: string }[] }>(
		`/api/runs/${runId}/events?limit=500`,
	);
	return body.events;
}

describe("CI failures on Lisa's pull requests", () => {
	it("CI fails → one round pushes a fix to the same PR → CI passes → no further round", async () => {
		const { issue, run, pull } = await resolved("Sum an empty list");
		const before = pull.head.sha;
		w.github.setChecks(REPO, before, [failing("test", "expected 0 to be NaN")]);
		const res = await send("check_suite", checkSuiteEvent(w.github, REPO, pull));
		expect(res).toMatchObject({ status: 202, body: { queued: true, runId: run.id } });

		const parent = await parentWhen(run.id, roundsDone(1));
		const [entry] = followUps(parent);
		const round = await w.waitForRun(entry?.runId as string);
		expect(round).toMatchObject({
			status: "succeeded",
			trigger: "ci_failure",
			parentRunId: run.id,
			issueId: `${REPO}#${issue.number}`,
			prUrls: [pull.html_url],
		});
		// New commits on the same branch and pull request: no second PR, title and body untouched.
		const after = pullNow(pull.number);
		expect(after.head.ref).toBe(pull.head.ref);
		expect(after.head.sha).not.toBe(before);
		expect(after.title).toBe(pull.title);
		expect(after.body).toBe(pull.body);
		expect(w.github.pulls(REPO).filter((p) => p.body?.includes(run.id))).toHaveLength(1);
		// The failing check reached the agent's prompt as untrusted data.
		const prompt = (await w.agents.callsOf(round.id)).at(-1)?.prompt;
		expect(prompt).toContain("expected 0 to be NaN");
		expect(prompt).toMatch(/```untrusted-/);
		// One comment on the PR for the round, one line on the issue; the issue stays in review.
		expect(prComments(pull.number).filter((b) => b.includes(round.id))).toHaveLength(1);
		expect(prComments(pull.number).find((b) => b.includes(round.id))).toMatch(
			/round 1 \(CI failure\):\*\* pushed new commits/,
		);
		const issueLines = w.github
			.comments(REPO, issue.number)
			.filter((c) => c.body?.includes(round.id));
		expect(issueLines).toHaveLength(1);
		expect(
			w.github
				.issues(REPO)
				.find((i) => i.number === issue.number)
				?.labels.map((l) => l.name),
		).toEqual(["in review"]);

		// CI passes on the round's commit: nothing more.
		w.github.setChecks(REPO, after.head.sha, [{ name: "test", conclusion: "success" }]);
		const green = await send(
			"check_suite",
			checkSuiteEvent(w.github, REPO, after, { conclusion: "success" }),
		);
		expect(green.body.ignored).toMatch(/success/);
		// The failing commit's event again (a replay with another body) makes no second round.
		const again = await send("check_run", checkRunEvent(w.github, REPO, pull, { headSha: before }));
		expect(again.status).toBe(202);
		await parentWhen(run.id, (r) => pendings(r) === 0);
		expect(followUps(await w.waitForRun(run.id))).toHaveLength(1);
		expect((await events(run.id)).map((e) => e.message).join("\n")).toMatch(
			/already answered by round|no longer the head/,
		);
	});

	it("a round with nothing to change says so on the PR and pushes nothing", async () => {
		const { run, pull } = await resolved("Nothing to fix");
		// What the failing check printed reaches the (fake) agent, which then commits nothing.
		w.github.setChecks(REPO, pull.head.sha, [
			{ ...failing("e2e", "flaky network"), log: "Error: flaky network\nlisa-fake: no-commit" },
		]);
		expect((await send("check_suite", checkSuiteEvent(w.github, REPO, pull))).status).toBe(202);
		const parent = await parentWhen(run.id, roundsDone(1));
		const round = await w.waitForRun(followUps(parent)[0]?.runId as string);
		expect(round.status).toBe("succeeded");
		expect(pullNow(pull.number).head.sha).toBe(pull.head.sha);
		const said = prComments(pull.number).filter((b) => b.includes(round.id));
		expect(said).toHaveLength(1);
		expect(said[0]).toMatch(/round 1 \(CI failure\):\*\* found nothing to change/);
	});

	it("two failing checks of one commit make one round, once the commit's checks are complete", async () => {
		const { run, pull } = await resolved("Lint and test");
		const sha = pull.head.sha;
		// test fails while lint still runs: the round waits for lint.
		w.github.setChecks(REPO, sha, [
			failing("test", "expected 1 to be 2"),
			{ name: "lint", status: "in_progress" },
		]);
		expect(
			(await send("check_run", checkRunEvent(w.github, REPO, pull, { name: "test" }))).status,
		).toBe(202);
		const waiting = await parentWhen(run.id, (r) => pendings(r) === 1);
		expect(followUps(waiting)).toHaveLength(0);
		await new Promise((r) => setTimeout(r, 2500));
		expect(followUps(await w.waitForRun(run.id))).toHaveLength(0);

		w.github.setChecks(REPO, sha, [
			failing("test", "expected 1 to be 2"),
			failing("lint", "no-unused-vars"),
		]);
		expect(
			(await send("check_run", checkRunEvent(w.github, REPO, pull, { name: "lint" }))).status,
		).toBe(202);
		expect((await send("check_suite", checkSuiteEvent(w.github, REPO, pull))).status).toBe(202);
		const parent = await parentWhen(run.id, roundsDone(1));
		const round = await w.waitForRun(followUps(parent)[0]?.runId as string);
		expect(round.status).toBe("succeeded");
		const prompt = (await w.agents.callsOf(round.id)).at(-1)?.prompt;
		expect(prompt).toContain("expected 1 to be 2");
		expect(prompt).toContain("no-unused-vars");
		expect(followUps(await w.waitForRun(run.id))).toHaveLength(1);
	});

	it("the same failure after a round stops CI rounds with a comment on the PR and the issue", async () => {
		const { issue, run, pull } = await resolved("Fix the flaky clock");
		w.github.setChecks(REPO, pull.head.sha, [
			failing("test", "clock skew of 3 s", "2026-11-24T10:00:00.000Z"),
		]);
		await send("check_suite", checkSuiteEvent(w.github, REPO, pull));
		await parentWhen(run.id, roundsDone(1));

		// The round's commit fails the same way (another time, another duration).
		const fixed = pullNow(pull.number);
		expect(fixed.head.sha).not.toBe(pull.head.sha);
		w.github.setChecks(REPO, fixed.head.sha, [
			failing("test", "clock skew of 3 s", "2026-11-24T11:30:00.000Z"),
		]);
		expect((await send("check_suite", checkSuiteEvent(w.github, REPO, fixed))).status).toBe(202);
		const stopped = await parentWhen(run.id, (r) => "followUpsStopped" in r);
		expect(followUps(stopped)).toHaveLength(1);
		const guard = await until(() =>
			prComments(pull.number).find((b) => b.includes("could not fix the failing checks")),
		);
		expect(guard).toContain("test (failure)");
		expect(guard).toContain("clock skew");
		await until(() =>
			w.github
				.comments(REPO, issue.number)
				.find((c) => c.body?.includes("could not fix the failing checks")),
		);
		expect((await events(run.id)).some((e) => e.type === "followup.stopped")).toBe(true);

		// No round is spent on CI afterwards: the event is ignored with the reason.
		const later = await send("check_run", checkRunEvent(w.github, REPO, fixed, { name: "build" }));
		expect(later.status).toBe(202);
		let seen: { type: string; message: string }[] = [];
		const deadline = Date.now() + 30_000;
		while (
			!seen.some((e) => e.type === "followup.ignored" && /CI rounds stopped/.test(e.message))
		) {
			if (Date.now() > deadline) throw new Error("the later failure was never judged");
			await new Promise((r) => setTimeout(r, 200));
			seen = await events(run.id);
		}
		expect(followUps(await w.waitForRun(run.id))).toHaveLength(1);
		expect(pendings(await w.waitForRun(run.id))).toBe(0);
	});
});
