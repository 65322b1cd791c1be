import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitHubIssue, GitHubPull } from "../doubles/github/server";
import {
	githubHeaders,
	issueCommentEvent,
	issuesEvent,
	pullRequestClosedEvent,
} from "../doubles/github/webhook";
import { createStackWorld, GITHUB_FOLLOWING_MERGES, type StackWorld } from "../support/stack";
import { GITHUB_WEBHOOK_SECRET } from "../support/world";

// GitHub Issues as the source (status labels; pick_from "open"), and the merged-PR follow-up.

const REPO = "acme/api";
let w: StackWorld;

beforeAll(async () => {
	w = await createStackWorld({ source: "github", config: GITHUB_FOLLOWING_MERGES });
});
afterAll(() => w.stop());

const send = (event: string, payload: unknown, deliveryId?: string) =>
	w.sendGitHub(event, payload, deliveryId);
const human = "ada";
const labelled = (issue: GitHubIssue) =>
	send("issues", issuesEvent(w.github, REPO, issue, { label: "lisa", sender: human }));
const issueNow = (n: number) => w.github.issues(REPO).find((i) => i.number === n) as GitHubIssue;
const labelsOf = (n: number) => issueNow(n).labels.map((l) => l.name);
const runsOf = async (n: number) =>
	(await w.stack?.deps.store.runsOfIssue("github", `${REPO}#${n}`)) ?? [];

describe("GitHub Issues end to end", () => {
	let resolved: { issue: GitHubIssue; runId: string };

	it("resolves a labelled issue: status label in review, label removed, PR resolves it; Lisa's own events start nothing", async () => {
		const issue = w.github.addIssue(REPO, {
			title: "Fix login redirect",
			body: "Users land on /home.",
			labels: ["lisa"],
			user: human,
		});
		const res = await labelled(issue);
		expect(res.status).toBe(202);
		const { runId } = (await res.json()) as { runId: string };
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run).toMatchObject({
			issueId: `${REPO}#${issue.number}`,
			issueKey: `${REPO}#${issue.number}`,
		});

		const pr = w.github.pulls(REPO).find((p) => p.head.ref.endsWith("fix-login-redirect"));
		expect(pr?.head.ref).toBe(`feat/acme-api-${issue.number}-fix-login-redirect`);
		expect(pr?.body).toContain(`Resolves ${REPO}#${issue.number}`);
		expect(run.prUrls).toEqual([pr?.html_url]);
		expect(labelsOf(issue.number)).toEqual(["in review"]);
		expect(issueNow(issue.number).state).toBe("open");
		const comments = w.github.comments(REPO, issue.number);
		expect(comments.map((c) => c.user.login)).toEqual([w.github.login, w.github.login]);
		expect(comments[0]?.body).toMatch(/^Lisa is working on this issue/);
		expect(comments[1]?.body).toContain(pr?.html_url);

		// Lisa's own label changes and comments come back as webhooks and are ignored.
		const ownLabel = await send(
			"issues",
			issuesEvent(w.github, REPO, issue, { label: "lisa", sender: w.github.login }),
		);
		expect(await ownLabel.json()).toEqual({ ignored: "the event was caused by Lisa itself" });
		const ownComment = await send(
			"issue_comment",
			issueCommentEvent(w.github, REPO, issueNow(issue.number), comments[1] as never),
		);
		expect(await ownComment.json()).toEqual({
			ignored: "Lisa's own comment (it carries Lisa's marker)",
		});
		expect((await runsOf(issue.number)).map((r) => r.runId)).toEqual([runId]);
		resolved = { issue, runId };
	});

	it("returns a failed issue to open (no status label) with a comment", async () => {
		const issue = w.github.addIssue(REPO, {
			title: "Break things",
			body: "lisa-fake: stderr=fatal: the build is on fire\nlisa-fake: exit=3",
			labels: ["lisa"],
			user: human,
		});
		const { runId } = (await (await labelled(issue)).json()) as { runId: string };
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("failed");
		expect(labelsOf(issue.number)).toEqual(["lisa"]);
		const last = w.github.comments(REPO, issue.number).at(-1);
		expect(last?.body).toMatch(/could not resolve this issue: claude exited with code 3/);
		expect(last?.body).toContain('back in "open"');
	});

	it("records a merged PR on the run and moves the issue to the merged state", async () => {
		const pr = w.github.pulls(REPO).find((p) => p.body?.includes(resolved.runId));
		if (!pr) throw new Error("no PR");
		const merged = await w.github.mergePull(REPO, pr.number, { mergedBy: human });
		const delivery = crypto.randomUUID();
		const res = await send(
			"pull_request",
			pullRequestClosedEvent(w.github, REPO, merged, human),
			delivery,
		);
		expect(res.status).toBe(202);
		expect(await res.json()).toEqual({ queued: true, runId: resolved.runId });
		const run = await w.waitForRun(resolved.runId, (r) => r.tracker.merged === true);
		expect(run.closedPullRequests).toEqual([
			{
				url: pr.html_url,
				merged: true,
				at: merged.merged_at,
				by: human,
				mergeCommitSha: merged.merge_commit_sha,
			},
		]);
		expect(labelsOf(resolved.issue.number)).toEqual(["merged"]);
		// The same delivery again under another delivery id: the body is what is deduplicated.
		const again = await send("pull_request", pullRequestClosedEvent(w.github, REPO, merged, human));
		expect(await again.json()).toEqual({ duplicate: true });
		const events = await w.api<{ events: { type: string; message: string }[] }>(
			`/api/runs/${resolved.runId}/events`,
		);
		expect(events.body.events.filter((e) => e.type === "pr.merged").map((e) => e.message)).toEqual([
			`${pr.html_url} merged by ${human}`,
		]);
	});

	it("records a PR closed without merging, and leaves the issue where it is", async () => {
		const issue = w.github.addIssue(REPO, { title: "Close me", labels: ["lisa"], user: human });
		const { runId } = (await (await labelled(issue)).json()) as { runId: string };
		await w.waitForRun(runId);
		const pr = w.github.pulls(REPO).find((p) => p.body?.includes(runId));
		if (!pr) throw new Error("no PR");
		const closed = await fetch(`${w.github.url}/repos/${REPO}/pulls/${pr.number}`, {
			method: "PATCH",
			headers: { authorization: `token ${w.github.token}`, "content-type": "application/json" },
			body: JSON.stringify({ state: "closed" }),
		}).then((r) => r.json() as Promise<GitHubPull>);
		const res = await send("pull_request", pullRequestClosedEvent(w.github, REPO, closed, human));
		expect(res.status).toBe(202);
		const run = await w.waitForRun(runId, (r) => (r.closedPullRequests ?? []).length > 0);
		expect(run.closedPullRequests).toEqual([
			expect.objectContaining({ url: pr.html_url, merged: false, by: human }),
		]);
		expect(run.tracker.merged).toBeUndefined();
		expect(labelsOf(issue.number)).toEqual(["in review"]);
	});

	it("ignores PRs that are not Lisa's, or whose marker names a run that did not open them", async () => {
		const pr = w.github.pulls(REPO).find((p) => p.body?.includes(resolved.runId));
		if (!pr) throw new Error("no PR");
		const stranger = { ...pr, html_url: `https://github.com/${REPO}/pull/999`, number: 999 };
		const noMarker = { ...pr, body: "A human PR" };
		const answers = [
			await (
				await send("pull_request", pullRequestClosedEvent(w.github, REPO, noMarker, human))
			).json(),
			await (
				await send("pull_request", pullRequestClosedEvent(w.github, REPO, stranger, human))
			).json(),
		];
		expect(answers).toEqual([
			{ ignored: "not a Lisa pull request" },
			{ ignored: `${stranger.html_url} is not a pull request of run ${resolved.runId}` },
		]);
	});
});

describe("GitHub deliveries", () => {
	it("ignores irrelevant events with the reason", async () => {
		const issue = w.github.addIssue(REPO, { title: "Just a bug", labels: ["bug"], user: human });
		const answers = [
			await (
				await send("issues", issuesEvent(w.github, REPO, issue, { label: "bug", sender: human }))
			).json(),
			await (
				await send(
					"issues",
					issuesEvent(w.github, REPO, issue, { action: "opened", sender: human }),
				)
			).json(),
			await (await send("ping", { zen: "Keep it logically awesome." })).json(),
			await (await send("push", { ref: "refs/heads/main" })).json(),
		];
		expect(answers).toEqual([
			{ ignored: 'label "bug" is not "lisa" or "lisa-epic"' },
			{ ignored: "issue opened is not a trigger" },
			{ ignored: "ping" },
			{ ignored: "push events are not handled" },
		]);
		expect(await runsOf(issue.number)).toEqual([]);
	});

	it("rejects bad or missing signatures, fails closed without a secret, and deduplicates on the signed body, whatever X-GitHub-Delivery says", async () => {
		const issue = w.github.addIssue(REPO, { title: "Signed once", labels: ["lisa"], user: human });
		const body = JSON.stringify(
			issuesEvent(w.github, REPO, issue, { label: "lisa", sender: human }),
		);
		const good = githubHeaders(body, GITHUB_WEBHOOK_SECRET, "issues");
		const wrong = githubHeaders(body, "not-the-secret", "issues");
		const { "x-hub-signature-256": _, ...unsigned } = good;
		const closed = w.appWith({ github: { webhookSecret: undefined } });
		const statuses = [
			(await w.post("/webhooks/github", body, wrong)).status,
			(await w.post("/webhooks/github", body, unsigned)).status,
			(await closed.request("/webhooks/github", { method: "POST", body, headers: good })).status,
		];
		expect(statuses).toEqual([401, 401, 401]);
		expect(await runsOf(issue.number)).toEqual([]);

		const first = await w.post("/webhooks/github", body, good);
		// The same signed body again, with a delivery id of its own (GitHub does not sign it).
		const second = await w.post(
			"/webhooks/github",
			body,
			githubHeaders(body, GITHUB_WEBHOOK_SECRET, "issues"),
		);
		expect([first.status, second.status]).toEqual([202, 200]);
		expect(await second.json()).toEqual({ duplicate: true });
		await w.waitForRun(((await first.json()) as { runId: string }).runId);
		expect(await runsOf(issue.number)).toHaveLength(1);
	});
});
