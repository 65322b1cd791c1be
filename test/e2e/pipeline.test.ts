import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branches, git } from "../support/git";
import { createWorld, type World } from "../support/world";

let w: World;
beforeAll(async () => {
	w = await createWorld();
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

		// The tracker: In Progress, then In Review; the PR attached; a comment with the PR and run link.
		const moves = w.linear.state.issueUpdates
			.filter((u) => u.issueId === issue.id && u.input.stateId)
			.map((u) => w.linear.state.states.find((s) => s.id === u.input.stateId)?.name);
		expect(moves).toEqual(["In Progress", "In Review"]);
		expect(w.linear.stateName(issue)).toBe("In Review");
		expect(w.linear.labelNames(issue)).not.toContain("lisa");
		const attachments = w.linear.state.attachments.filter((a) => a.issueId === issue.id);
		expect(attachments.map((a) => a.url)).toEqual([pr?.html_url]);
		const comments = w.linear.state.comments.filter((c) => c.issueId === issue.id);
		expect(comments).toHaveLength(1);
		expect(comments[0]?.body).toContain(pr?.html_url);
		expect(comments[0]?.body).toContain(run.links.dashboard);

		// The agent ran with the DESIGN §9 argv, without CLAUDECODE and without Lisa's secrets.
		const calls = await w.agents.calls();
		const call = calls.find((c) => c.cwd.includes(runId));
		expect(call?.cli).toBe("claude");
		expect(call?.argv.slice(0, 2)).toEqual(["-p", "--dangerously-skip-permissions"]);
		expect(call?.claudecode).toBeNull();
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
