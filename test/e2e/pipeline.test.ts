import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { NotConfigured } from "../../src/integrations/tracker";
import { issueWebhook, linearHeaders, signLinear } from "../doubles/linear/webhook";
import { branches, git } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";
import { type ApiRun, WEBHOOK_SECRET } from "../support/world";

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({
		configExtra: "limits: {max_attempts: 2, retry_backoff_seconds: 1}",
	});
});
afterAll(() => w.stop());

describe("webhook → pull request, on the local stack", () => {
	it("(a) resolves a labelled Linear issue end to end", async () => {
		const issue = w.issue("Fix login redirect", "Users land on /home instead of where they were.");
		const res = await w.sendWebhook(w.createdWebhook(issue));
		expect(res.status).toBe(202);
		const { runId } = (await res.json()) as { runId: string };

		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.steps).toHaveLength(1);
		// One repo configured: no planning step, no plan, no planning prompt.
		expect(run.steps[0]).toMatchObject({ index: 0, repo: "api" });
		expect(run.steps[0]?.kind).toBeUndefined();
		expect(run.plan).toBeUndefined();
		const branch = "feat/eng-1-fix-login-redirect";
		expect(run.steps[0]).toMatchObject({
			status: "succeeded",
			attempt: 1,
			branch,
			provider: "claude",
		});

		// The branch was pushed to the remote with the agent's commit on top of main.
		expect(await branches(w.repo.path)).toEqual(expect.arrayContaining(["main", branch]));
		expect(await git(w.repo.path, "log", "-1", "--format=%s", branch)).toBe(
			"feat: fix login redirect",
		);
		expect(await git(w.repo.path, "rev-list", "--count", `main..${branch}`)).toBe("1");
		expect(await git(w.repo.path, "show", `${branch}:LISA_CHANGE.md`)).toMatch(
			/Fix login redirect/,
		);

		// One PR, base = the repo's base branch, body cleaned with the issue link and the run marker.
		const pulls = w.github.pulls("acme/api");
		expect(pulls).toHaveLength(1);
		const pr = pulls[0];
		expect(pr?.base.ref).toBe("main");
		expect(pr?.head.ref).toBe(branch);
		expect(pr?.title).toBe("feat: fix login redirect");
		expect(pr?.body).toContain(`Resolves ${issue.url}`);
		expect(pr?.body).toContain(`<!-- lisa:run=${runId} -->`);
		expect(pr?.body).toContain("- **What**: Fix login redirect");
		expect(run.prUrls).toEqual([pr?.html_url]);

		// The tracker: In Progress, then In Review; the PR attached; a comment when the run started
		// and one with the PR, both with the run link.
		const moves = w.linear.state.issueUpdates
			.filter((u) => u.issueId === issue.id && u.input.stateId)
			.map((u) => w.linear.state.states.find((s) => s.id === u.input.stateId)?.name);
		expect(moves).toEqual(["In Progress", "In Review"]);
		expect(w.linear.stateName(issue)).toBe("In Review");
		expect(w.linear.labelNames(issue)).not.toContain("lisa");
		const attachments = w.linear.state.attachments.filter((a) => a.issueId === issue.id);
		expect(attachments.map((a) => a.url)).toEqual([pr?.html_url]);
		const comments = w.linear.state.comments.filter((c) => c.issueId === issue.id);
		expect(comments).toHaveLength(2);
		expect(comments[0]?.body).toMatch(/^Lisa is working on this issue \(api\)/);
		expect(comments[0]?.body).toContain(run.links.dashboard);
		expect(comments[1]?.body).toContain(pr?.html_url);
		expect(comments[1]?.body).toContain(run.links.dashboard);

		// The agent ran with its documented argv, without CLAUDECODE and without Lisa's secrets.
		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(1);
		const [call] = calls;
		expect(call?.cli).toBe("claude");
		expect(call?.argv.slice(0, 2)).toEqual(["-p", "--dangerously-skip-permissions"]);
		expect(call?.claudecode).toBeNull();
		expect(call?.target).toBe("api");
		expect(call?.prompt).not.toContain("You are planning");
		expect(call?.prompt).not.toContain("## Your scope");
		expect(call?.env).toContain("ANTHROPIC_API_KEY");
		for (const secret of [
			"GITHUB_TOKEN",
			"LINEAR_API_KEY",
			"LINEAR_WEBHOOK_SECRET",
			"LISA_TABLE_NAME",
		])
			expect(call?.env).not.toContain(secret);

		// The timeline tells the story.
		const events = await w.api<{ events: { type: string }[] }>(`/api/runs/${runId}/events`);
		expect(events.body.events.map((e) => e.type)).not.toContain("run.planning");
		expect(events.body.events.map((e) => e.type)).toEqual(
			expect.arrayContaining([
				"run.requested",
				"run.started",
				"tracker.moved",
				"step.launched",
				"step.succeeded",
				"run.succeeded",
			]),
		);
	});
});

describe("failures are visible in the API and the tracker", () => {
	it("(b) an agent that exits non-zero fails the run and returns the issue to pick_from", async () => {
		const issue = w.issue(
			"Break things",
			"lisa-fake: stderr=fatal: the build is on fire\nlisa-fake: exit=3",
		);
		const res = await w.sendWebhook(w.createdWebhook(issue));
		const { runId } = (await res.json()) as { runId: string };
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("failed");
		expect(run.error).toMatch(/claude exited with code 3/);
		expect(run.error).toMatch(/the build is on fire/);
		expect(run.steps[0]).toMatchObject({ status: "failed", attempt: 1 });
		expect(w.linear.stateName(issue)).toBe("Todo");
		expect(w.linear.labelNames(issue)).toContain("lisa");
		const comments = w.linear.state.comments.filter((c) => c.issueId === issue.id);
		expect(comments).toHaveLength(2);
		expect(comments[1]?.body).toMatch(/could not resolve this issue: claude exited with code 3/);
		expect(comments[1]?.body).toContain('back in "Todo"');

		// Lisa's own move back to Todo (the issue is labelled: a person doing this would start a run)
		// and its own comment come back as webhooks; neither starts a second run.
		const viewer = w.linear.state.viewer;
		const ownMove = JSON.stringify(
			issueWebhook({
				action: "update",
				issue,
				double: w.linear,
				updatedFrom: { stateId: w.linear.state.states.find((s) => s.name === "In Progress")?.id },
				actor: { id: viewer.id, name: viewer.name },
			}),
		);
		const last = comments[1];
		const ownComment = JSON.stringify({
			action: "create",
			type: "Comment",
			actor: { id: viewer.id, name: viewer.name, type: "user" },
			createdAt: last?.createdAt,
			data: { id: last?.id, body: last?.body, issueId: issue.id, userId: viewer.id },
			url: issue.url,
			organizationId: w.linear.state.organization.id,
			webhookId: "wh-1",
			webhookTimestamp: Date.now(),
		});
		expect(await (await w.sendWebhook(ownMove)).json()).toEqual({
			ignored: "the event was caused by Lisa itself",
		});
		expect(await (await w.sendWebhook(ownComment)).json()).toEqual({
			ignored: "Lisa's own comment (it carries Lisa's marker)",
		});
		expect(
			(await w.stack?.deps.store.runsOfIssue("linear", issue.id))?.map((r) => r.runId),
		).toEqual([runId]);
		expect(w.github.pulls("acme/api").some((p) => p.head.ref.includes("break-things"))).toBe(false);
	});

	it("retries a transient agent failure up to max_attempts, then fails with the reason", async () => {
		const issue = w.issue(
			"Rate limited",
			"lisa-fake: stderr=Error 429: Too Many Requests\nlisa-fake: exit=1",
		);
		const res = await w.sendWebhook(w.createdWebhook(issue));
		const { runId } = (await res.json()) as { runId: string };
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("failed");
		expect(run.steps[0]?.attempt).toBe(2);
		expect(run.error).toMatch(/429/);
		const events = await w.api<{ events: { type: string }[] }>(`/api/runs/${runId}/events`);
		expect(events.body.events.filter((e) => e.type === "step.retry")).toHaveLength(1);
		expect(events.body.events.filter((e) => e.type === "step.launched")).toHaveLength(2);
	});

	it("fails clearly when the agent commits nothing or writes no manifest", async () => {
		const noCommit = w.issue("Lazy agent", "lisa-fake: no-commit");
		const badManifest = w.issue("Sloppy agent", "lisa-fake: bad-manifest");
		const ids = await Promise.all(
			[noCommit, badManifest].map(
				async (i) =>
					((await (await w.sendWebhook(w.createdWebhook(i))).json()) as { runId: string }).runId,
			),
		);
		const [a, b] = await Promise.all(ids.map((id) => w.waitForRun(id)));
		expect(a).toMatchObject({
			status: "failed",
			error: "the agent finished without committing any change",
		});
		expect(b).toMatchObject({ status: "failed", error: ".lisa-manifest.json is not valid JSON" });
	});
});

describe("webhook intake", () => {
	it("(c) the same delivery sent 20 times concurrently makes exactly one run", async () => {
		const issue = w.issue("Only once");
		const body = w.createdWebhook(issue);
		// Each with its own Linear-Delivery: the signed body is what makes them the same delivery.
		const responses = await Promise.all(
			Array.from({ length: 20 }, () => w.sendWebhook(body, linearHeaders(body, WEBHOOK_SECRET))),
		);
		const statuses = responses.map((r) => r.status).sort();
		expect(statuses.filter((s) => s === 202)).toHaveLength(1);
		expect(statuses.filter((s) => s === 200)).toHaveLength(19);
		const bodies = await Promise.all(
			responses.map((r) => r.json() as Promise<Record<string, unknown>>),
		);
		expect(bodies.filter((b) => b.duplicate === true)).toHaveLength(19);
		const runId = bodies.find((b) => b.runId)?.runId as string;
		await w.waitForRun(runId);
		const runs = await w.stack?.deps.store.runsOfIssue("linear", issue.id);
		expect(runs?.map((r) => r.runId)).toEqual([runId]);
		expect(w.github.pulls("acme/api").filter((p) => p.head.ref.includes("only-once"))).toHaveLength(
			1,
		);
	});

	it("a second delivery for an issue with an active run does not start a second run", async () => {
		const issue = w.issue("Busy issue", "lisa-fake: sleep=2");
		const first = (await (await w.sendWebhook(w.createdWebhook(issue))).json()) as {
			runId: string;
		};
		const update = JSON.stringify(
			issueWebhook({ action: "update", issue, double: w.linear, updatedFrom: { labelIds: [] } }),
		);
		const second = (await (await w.sendWebhook(update)).json()) as { runId: string };
		const [a, b] = await Promise.all([w.waitForRun(first.runId), w.waitForRun(second.runId)]);
		expect(a.status).toBe("succeeded");
		expect(b).toMatchObject({
			status: "cancelled",
			error: expect.stringMatching(/already has an active run/),
		});
		// The first run's start and result; the cancelled duplicate leaves the issue alone.
		expect(w.linear.state.comments.filter((c) => c.issueId === issue.id)).toHaveLength(2);
	});

	it("(d) rejects bad deliveries with 401/401/401/401/400/413 and starts no run", async () => {
		const issue = w.issue("Never run");
		const body = w.createdWebhook(issue);
		const good = linearHeaders(body, WEBHOOK_SECRET);
		const statusOf = async (b: string, h: Record<string, string>) =>
			(await w.sendWebhook(b, h)).status;

		const wrong = { ...good, "linear-signature": signLinear(body, "not-the-secret") };
		const { "linear-signature": _, ...missing } = good;
		const stalePayload = JSON.stringify({
			...JSON.parse(body),
			webhookTimestamp: Date.now() - 120_000,
		});
		const malformed = `${body.slice(0, -5)}`;
		const huge = JSON.stringify({ ...JSON.parse(body), padding: "x".repeat(2 * 1024 * 1024) });

		// No secret configured: the same app, built without it, fails closed.
		const stack = w.stack;
		if (!stack) throw new Error("no stack");
		const closed = w.appWith({ linear: { webhookSecret: undefined } });
		const noSecret = await closed.request("/webhooks/linear", {
			method: "POST",
			body,
			headers: good,
		});

		const results = [
			await statusOf(body, wrong),
			await statusOf(body, missing),
			await statusOf(stalePayload, linearHeaders(stalePayload, WEBHOOK_SECRET)),
			noSecret.status,
			await statusOf(malformed, linearHeaders(malformed, WEBHOOK_SECRET)),
			await statusOf(huge, linearHeaders(huge, WEBHOOK_SECRET)),
		];
		expect(results).toEqual([401, 401, 401, 401, 400, 413]);
		// Authentication comes first: a malformed body that is not signed is refused, not parsed.
		const { "linear-signature": __, ...unsigned } = linearHeaders(malformed, WEBHOOK_SECRET);
		expect(await statusOf(malformed, unsigned)).toBe(401);
		expect(await stack.deps.store.runsOfIssue("linear", issue.id)).toEqual([]);
	});

	it("answers irrelevant events with the reason, and ignores Lisa's own actions", async () => {
		const issue = w.issue("Not labelled", "", ["bug"]);
		const res = await w.sendWebhook(w.createdWebhook(issue));
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ ignored: 'created without label "lisa"' });

		const labelled = w.issue("Moved back by Lisa");
		const viewer = w.linear.state.viewer;
		const own = JSON.stringify(
			issueWebhook({
				action: "update",
				issue: labelled,
				double: w.linear,
				updatedFrom: { stateId: "x" },
				actor: { id: viewer.id, name: viewer.name },
			}),
		);
		const ownRes = await w.sendWebhook(own);
		expect(await ownRes.json()).toEqual({ ignored: "the event was caused by Lisa itself" });
		expect(await w.stack?.deps.store.runsOfIssue("linear", labelled.id)).toEqual([]);
	});

	it("answers an irrelevant event type with the reason even before Lisa is configured", async () => {
		const stack = w.stack;
		if (!stack) throw new Error("no stack");
		const unconfigured = createApp({
			...stack.deps,
			config: () => ({ status: "missing", file: "nowhere.yaml" }),
		});
		const comment = JSON.stringify({
			type: "Reaction",
			action: "create",
			data: { id: "r1", emoji: "+1" },
			webhookTimestamp: Date.now(),
		});
		const res = await unconfigured.request("/webhooks/linear", {
			method: "POST",
			body: comment,
			headers: linearHeaders(comment, WEBHOOK_SECRET),
		});
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ ignored: "Reaction events are not handled" });
		const issue = w.issue("Before the config exists");
		const body = w.createdWebhook(issue);
		const trigger = await unconfigured.request("/webhooks/linear", {
			method: "POST",
			body,
			headers: linearHeaders(body, WEBHOOK_SECRET),
		});
		expect(trigger.status).toBe(503);
	});

	it("accepts a trigger when the tracker key is missing, and the run says what is missing", async () => {
		const stack = w.stack;
		if (!stack) throw new Error("no stack");
		const keyless = createApp({
			...stack.deps,
			selfActorId: async () => {
				throw new NotConfigured("LINEAR_API_KEY is not set");
			},
		});
		const issue = w.issue("No key yet");
		const body = w.createdWebhook(issue);
		const res = await keyless.request("/webhooks/linear", {
			method: "POST",
			body,
			headers: linearHeaders(body, WEBHOOK_SECRET),
		});
		expect(res.status).toBe(202);
		// The pipeline itself has the key, so this run completes; the API did not refuse it.
		const { runId } = (await res.json()) as { runId: string };
		expect((await w.waitForRun(runId)).status).toBe("succeeded");
	});
});

describe("runs API", () => {
	it("requires the bearer token, lists newest first with a cursor, and 404s unknown runs", async () => {
		const anon = await fetch(`${w.url()}/api/runs`);
		expect(anon.status).toBe(401);
		const wrong = await fetch(`${w.url()}/api/runs`, { headers: { authorization: "Bearer nope" } });
		expect(wrong.status).toBe(401);
		const page1 = await w.api<{ runs: ApiRun[]; nextCursor: string | null }>("/api/runs?limit=2");
		expect(page1.status).toBe(200);
		expect(page1.body.runs).toHaveLength(2);
		expect(page1.body.nextCursor).toBeTruthy();
		const page2 = await w.api<{ runs: ApiRun[] }>(
			`/api/runs?limit=2&cursor=${page1.body.nextCursor}`,
		);
		const ids = [...page1.body.runs, ...page2.body.runs].map((r) => r.id);
		expect(new Set(ids).size).toBe(4);
		expect([...ids].sort().reverse()).toEqual(ids); // ULIDs: newest first
		const failed = await w.api<{ runs: ApiRun[] }>("/api/runs?status=failed");
		expect(failed.body.runs.length).toBeGreaterThan(0);
		expect(failed.body.runs.every((r) => r.status === "failed")).toBe(true);
		expect((await w.api("/api/runs?status=bogus")).status).toBe(400);
		expect((await w.api("/api/runs/01JD8X4Z0Q5N8M2R7K3V9W6T1E")).status).toBe(404);
		expect((await w.api("/api/runs/NOPE")).status).toBe(400);
		// Every authentication failure is 401, a malformed header included.
		for (const authorization of ["Basic abc", "Bearer", "not-even-a-scheme"])
			expect((await fetch(`${w.url()}/api/runs`, { headers: { authorization } })).status).toBe(401);
		// Following cursors ends with null, also when the last page is exactly full.
		const all = (await w.api<{ runs: ApiRun[] }>("/api/runs?limit=100")).body.runs.length;
		const exact = await w.api<{ runs: ApiRun[]; nextCursor: string | null }>(
			`/api/runs?limit=${all}`,
		);
		expect(exact.body.runs).toHaveLength(all);
		expect(exact.body.nextCursor).toBeNull();
		expect((await w.api<{ runs: ApiRun[] }>("/api/runs?limit=1000")).status).toBe(200);
		const stats = await w.api<{ counts: Record<string, number>; successRate: number }>(
			"/api/stats",
		);
		expect(stats.body.counts.succeeded).toBeGreaterThan(0);
		expect(stats.body.successRate).toBeGreaterThan(0);
	});

	it("starts a run for an issue key with POST /api/runs", async () => {
		const issue = w.issue("Started from the API");
		const res = await w.api<{ id: string }>("/api/runs", {
			method: "POST",
			body: JSON.stringify({ issue: issue.identifier }),
		});
		expect(res.status).toBe(202);
		const run = await w.waitForRun(res.body.id);
		expect(run).toMatchObject({
			status: "succeeded",
			issueId: issue.id,
			issueKey: issue.identifier,
		});
		const bad = await w.api<{ error: string }>("/api/runs", {
			method: "POST",
			body: JSON.stringify({ issue: "" }),
		});
		expect(bad.status).toBe(400);
		const missing = await w.api<{ id: string }>("/api/runs", {
			method: "POST",
			body: JSON.stringify({ issue: "ENG-999" }),
		});
		const failed = await w.waitForRun(missing.body.id);
		expect(failed).toMatchObject({ status: "failed", error: "Linear issue ENG-999 was not found" });
	});

	it("takes an issue URL, any Content-Type, and refuses another source than the configured one", async () => {
		const issue = w.issue("Started by URL");
		// curl -d sends a form content type; the body is still JSON.
		const res = await fetch(`${w.url()}/api/runs`, {
			method: "POST",
			headers: {
				authorization: `Bearer ${w.stack?.apiToken}`,
				"content-type": "application/x-www-form-urlencoded",
			},
			body: JSON.stringify({ source: "linear", issue: issue.url }),
		});
		expect(res.status).toBe(202);
		const run = await w.waitForRun(((await res.json()) as { id: string }).id);
		expect(run).toMatchObject({ status: "succeeded", issueId: issue.id });
		const other = await w.api<{ error: string }>("/api/runs", {
			method: "POST",
			body: JSON.stringify({ source: "trello", issue: "abc" }),
		});
		expect(other).toEqual({
			status: 400,
			body: { error: "source trello is not the configured source (linear)" },
		});
		const garbage = await w.api<{ error: string }>("/api/runs", { method: "POST", body: "{" });
		expect(garbage.status).toBe(400);
	});

	it("retries a finished run as a new run, and cancels a running one", async () => {
		const issue = w.issue("Try again", "lisa-fake: exit=5");
		const first = (await (await w.sendWebhook(w.createdWebhook(issue))).json()) as {
			runId: string;
		};
		expect((await w.waitForRun(first.runId)).status).toBe("failed");
		const retry = await w.api<{ id: string; retryOf: string }>(`/api/runs/${first.runId}/retry`, {
			method: "POST",
		});
		expect(retry.status).toBe(202);
		expect(retry.body.retryOf).toBe(first.runId);
		const again = await w.waitForRun(retry.body.id);
		expect(again).toMatchObject({ status: "failed", trigger: "retry", issueId: issue.id });

		const slow = w.issue("Cancel me", "lisa-fake: sleep=30");
		const started = (await (await w.sendWebhook(w.createdWebhook(slow))).json()) as {
			runId: string;
		};
		await w.waitForRun(started.runId, (r) => r.steps[0]?.status === "running");
		expect((await w.api(`/api/runs/${started.runId}/retry`, { method: "POST" })).status).toBe(409);
		const cancel = await w.api(`/api/runs/${started.runId}/cancel`, { method: "POST" });
		expect(cancel.status).toBe(202);
		const cancelled = await w.waitForRun(started.runId);
		expect(cancelled).toMatchObject({ status: "cancelled", error: "cancelled through the API" });
		expect(cancelled.steps[0]?.status).toBe("cancelled");
		expect(w.linear.stateName(slow)).toBe("Todo");
		expect((await w.api(`/api/runs/${started.runId}/cancel`, { method: "POST" })).status).toBe(409);
	});
});
