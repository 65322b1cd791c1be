import { readFile, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventsAnswer } from "../../src/api/schemas";
import type { GitHubPull } from "../doubles/github/server";
import { pullRequestCommentEvent } from "../doubles/github/webhook";
import { createStackWorld, resolvedIssue, type StackWorld } from "../support/stack";
import type { ApiRun } from "../support/world";

// A `/lisa continue` that was not written for the request it would answer
// (docs/cost.md › Cost and budgets). A collaborator's comment is delivered again, signed, with only
// its `updated_at` changed (or its `created_at` too): it must approve no request made after it was
// written, and no comment approves twice. Everything runs on the whole local stack: a real run
// opens the pull request, spends through the fake agent's reported usage, and its round pauses at
// the limit.

const REPO = "acme/api";
const ada = "ada";
/** What the fake agent reports spending, each time it runs: $3 at the config's price. */
const SPEND = JSON.stringify({
	type: "assistant",
	message: {
		id: "msg_spend",
		model: "fake-model",
		usage: { input_tokens: 3_000_000, output_tokens: 0 },
		content: [],
	},
});

const config =
	(limitUsd: number) =>
	({ repo }: { repo: { url: string } }) =>
		`source: github
source_config: {team: ${REPO}, label: lisa, pick_from: open, in_progress: in progress, done: in review}
provider: claude
pricing: {"claude:fake-model": {input: 1, output: 1}}
limits: {max_attempts: 1, max_run_cost_usd: ${limitUsd}}
follow_up: {debounce_seconds: 0}
repos:
  - name: api
    url: ${repo.url}
    slug: ${REPO}
`;

let w: StackWorld;
let runId: string;
let pr: GitHubPull;

beforeAll(async () => {
	w = await createStackWorld({ source: "github", config: config(10) });
	w.github.addCollaborator(REPO, ada);
	({ runId, pr } = await resolvedIssue(w, REPO, {
		title: "Fix the redirect",
		body: `lisa-fake: stdout=${SPEND}`,
		user: ada,
	}));
}, 120_000);
afterAll(() => w?.stop());

type Comment = ReturnType<typeof pullRequestCommentEvent>;

/** A collaborator's comment in the pull request's conversation, written now. */
const comment = (body: string) => pullRequestCommentEvent(w.github, REPO, pr, { user: ada, body });

async function deliver(payload: Comment) {
	const res = await w.sendGitHub("issue_comment", payload);
	return { status: res.status, body: await res.json() };
}

/** The same comment delivered again, signed, with some of its times changed. */
function again(original: Comment, times: { created_at?: string; updated_at: string }): Comment {
	return { ...original, comment: { ...original.comment, ...times } };
}

const events = async (id: string) =>
	(await w.api<EventsAnswer>(`/api/runs/${id}/events`)).body.events;
const ignoredApprovals = async () =>
	(await events(runId)).filter((e) => e.type === "approval.ignored").map((e) => e.message);

/** Polls until `check` holds (or fails with what it last saw). */
async function until<T>(what: string, read: () => Promise<T>, check: (v: T) => boolean) {
	const deadline = Date.now() + 90_000;
	let last: T | undefined;
	while (Date.now() < deadline) {
		last = await read();
		if (check(last)) return last;
		await new Promise((r) => setTimeout(r, 250));
	}
	throw new Error(`${what}: not reached; last seen ${JSON.stringify(last)}`);
}

const round = (id: string) => w.api<ApiRun>(`/api/runs/${id}`).then((r) => r.body);

/** Waits for the `n`th refusal on the run's timeline, or for the round to have been approved. */
const answered = (n: number, roundId: string, requestedAt: string) =>
	until(
		`refusal ${n}`,
		async () => ({ notes: await ignoredApprovals(), round: await round(roundId) }),
		(v) => v.notes.length >= n || v.round.approval?.requestedAt !== requestedAt,
	);
const later = () => new Date(Date.now() + 1000).toISOString();

describe("an approval is tied to the request it answers", () => {
	it("a comment sent again approves no request made after it was written, and no comment approves twice", async () => {
		// Written while nothing waits: it approves nothing, and is said so.
		const early = comment("/lisa continue");
		expect((await deliver(early)).status).toBe(202);
		await until("the early yes refused", ignoredApprovals, (m) => m.length === 1);
		expect(await ignoredApprovals()).toEqual([
			"`/lisa continue` by ada: no run of this pull request waits for approval",
		]);

		// The limit falls below what the pull request's run spent: its next round waits for approval.
		const file = w.configFile;
		await writeFile(
			file,
			(await readFile(file, "utf8")).replace("max_run_cost_usd: 10", "max_run_cost_usd: 1"),
		);
		expect((await deliver(comment("/lisa also cover the logout path"))).status).toBe(202);
		const parent = await until(
			"a round",
			() => w.api<ApiRun>(`/api/runs/${runId}`).then((r) => r.body),
			(r) => r.followUps.length === 1,
		);
		const roundId = parent.followUps[0]?.runId as string;
		const first = await until(
			"the round's request",
			() => round(roundId),
			(r) => r.status === "awaiting_approval",
		);
		const firstAt = first.approval?.requestedAt as string;

		// The early comment again, only `updated_at` changed: written before the request, it is refused.
		expect((await deliver(again(early, { updated_at: later() }))).status).toBe(202);
		await answered(2, roundId, firstAt);
		expect((await ignoredApprovals())[1]).toBe(
			`\`/lisa continue\` by ada: comment-${early.comment.id} was written at ${early.comment.created_at}, before the request of ${firstAt}`,
		);
		expect(await round(roundId)).toMatchObject({
			status: "awaiting_approval",
			approval: { requestedAt: firstAt },
		});
		expect((await round(roundId)).approvals ?? []).toEqual([]);

		// A yes written for it approves it; the round spends past its new limit and asks again.
		const yes = comment("Fine by me.\n\n/lisa continue");
		expect((await deliver(yes)).status).toBe(202);
		const second = await until(
			"the round's second request",
			() => round(roundId),
			(r) => r.status === "awaiting_approval" && r.approval?.requestedAt !== firstAt,
		);
		expect(second.approvals).toEqual([
			expect.objectContaining({ by: ada, via: "github", requestedAt: firstAt }),
		]);

		// That yes again, only `updated_at` changed: written before the second request.
		const secondAt = second.approval?.requestedAt as string;
		expect((await deliver(again(yes, { updated_at: later() }))).status).toBe(202);
		await answered(3, roundId, secondAt);
		// With its `created_at` moved past the second request too: it approved once already.
		expect((await deliver(again(yes, { created_at: later(), updated_at: later() }))).status).toBe(
			202,
		);
		await answered(4, roundId, secondAt);
		expect((await ignoredApprovals()).slice(2)).toEqual([
			`\`/lisa continue\` by ada: comment-${yes.comment.id} already approved a request`,
			`\`/lisa continue\` by ada: comment-${yes.comment.id} already approved a request`,
		]);
		const still = await round(roundId);
		expect(still).toMatchObject({
			status: "awaiting_approval",
			approval: { requestedAt: secondAt },
		});
		expect(still.approvals).toHaveLength(1);
	});
});
