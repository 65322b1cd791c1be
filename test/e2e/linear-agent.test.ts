import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DoubleAgentSession, DoubleIssue } from "../doubles/linear/server";
import { agentSessionWebhook } from "../doubles/linear/webhook";
import { createStackWorld, type StackWorld } from "../support/stack";

// Linear agent sessions: an issue delegated to Lisa's app starts a run that answers in the session
// (thought first, actions, then the response with the PRs or the error); "stop" cancels it.

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ configExtra: "limits: {max_attempts: 1}" });
});
afterAll(() => w.stop());

async function delegate(
	issue: DoubleIssue,
): Promise<{ runId: string; session: DoubleAgentSession }> {
	const payload = agentSessionWebhook({ action: "created", double: w.linear, issue });
	const res = await w.sendWebhook(JSON.stringify(payload));
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	const session = w.linear.state.agentSessions.find((s) => s.id === payload.agentSession.id);
	if (!session) throw new Error("no session");
	return { runId, session };
}

const activities = (session: DoubleAgentSession) =>
	w.linear.state.agentActivities.filter(
		(a) => a.agentSessionId === session.id && a.userId === w.linear.state.viewer.id,
	);

/** Index of the first request to the Linear double matching `test`. */
const requestIndex = (test: (q: string, v: Record<string, unknown>) => boolean) =>
	w.linear.requests.findIndex((r) => test(r.query, r.variables));

describe("Linear agent sessions", () => {
	it("answers a delegation with a thought first (before the task launches), then actions and the PR", async () => {
		const issue = w.issue("Add dark mode", "Respect the OS setting.", []);
		const { runId, session } = await delegate(issue);
		const run = await w.waitForRun(runId);
		expect(run.status).toBe("succeeded");
		expect(run.agentSessionId).toBe(session.id);

		const posted = activities(session);
		expect(posted.map((a) => a.content.type)).toEqual(["thought", "action", "response"]);
		expect(posted[0]?.content.body).toMatch(/^On it: reading ENG-\d+/);
		expect(posted[1]?.content).toMatchObject({
			action: "Working on",
			parameter: `${issue.identifier} in api`,
		});
		expect(posted[2]?.content.body).toContain(run.prUrls[0]);
		expect(session.status).toBe("complete");
		expect(session.externalUrls).toEqual([{ label: "Lisa run", url: run.links.dashboard }]);

		// The thought went out before the issue moved to In Progress, which precedes the launch.
		const inProgress = w.linear.state.states.find(
			(s) => s.name === "In Progress" && s.teamId === issue.teamId,
		);
		const thoughtAt = requestIndex(
			(q, v) =>
				q.includes("agentActivityCreate") &&
				(v.input as { content?: { type?: string } })?.content?.type === "thought",
		);
		const movedAt = requestIndex(
			(q, v) =>
				q.includes("issueUpdate") &&
				v.id === issue.id &&
				(v.input as { stateId?: string })?.stateId === inProgress?.id,
		);
		expect(thoughtAt).toBeGreaterThanOrEqual(0);
		expect(movedAt).toBeGreaterThan(thoughtAt);
		const events = await w.api<{ events: { type: string }[] }>(`/api/runs/${runId}/events`);
		const types = events.body.events.map((e) => e.type);
		expect(types.indexOf("session.acknowledged")).toBeLessThan(types.indexOf("step.launched"));

		// The session is the surface: no comments from Lisa; the issue itself is updated as usual.
		expect(
			w.linear.state.comments.filter(
				(c) => c.issueId === issue.id && c.userId === w.linear.state.viewer.id,
			),
		).toEqual([]);
		expect(w.linear.stateName(issue)).toBe("In Review");
		expect(
			w.linear.state.attachments.filter((a) => a.issueId === issue.id).map((a) => a.url),
		).toEqual(run.prUrls);
	});

	it("posts the thought even when the run fails, then the error", async () => {
		const failing = w.issue(
			"Break things",
			"lisa-fake: stderr=fatal: the build is on fire\nlisa-fake: exit=3",
			[],
		);
		const a = await delegate(failing);
		// An issue deleted before the run could read it: the run fails before any work, and says so
		// in the session (with the error alone: nothing reaches the tracker before the issue was read
		// and found still waiting).
		const gone = w.issue("Deleted meanwhile", "", []);
		const payload = agentSessionWebhook({ action: "created", double: w.linear, issue: gone });
		w.linear.state.issues.splice(w.linear.state.issues.indexOf(gone), 1);
		const res = await w.sendWebhook(JSON.stringify(payload));
		const b = {
			runId: ((await res.json()) as { runId: string }).runId,
			session: w.linear.state.agentSessions.find(
				(s) => s.id === payload.agentSession.id,
			) as DoubleAgentSession,
		};

		const [runA, runB] = await Promise.all([w.waitForRun(a.runId), w.waitForRun(b.runId)]);
		expect(runA.status).toBe("failed");
		expect(activities(a.session).map((x) => x.content.type)).toEqual([
			"thought",
			"action",
			"error",
		]);
		expect(activities(a.session)[2]?.content.body).toMatch(
			/^Could not resolve this issue: claude exited with code 3/,
		);
		expect(w.linear.stateName(failing)).toBe("Todo");

		expect(runB).toMatchObject({
			status: "failed",
			error: `Linear issue ${gone.identifier} was not found`,
		});
		expect(activities(b.session).map((x) => x.content.type)).toEqual(["error"]);
		expect(b.session.status).toBe("error");
	});

	it("records a follow-up on the run and stops the run on the stop signal", async () => {
		const issue = w.issue("Long job", "lisa-fake: sleep=60", []);
		const { runId, session } = await delegate(issue);
		await w.waitForRun(
			runId,
			(r) => r.steps[0]?.status === "running" && r.steps[0]?.agentState === "in_progress",
		);

		// A follow-up far longer than the run keeps is cut at the webhook, not refused.
		const long = `Please also update the docs ${"and more ".repeat(40_000)}`;
		const prompted = agentSessionWebhook({
			action: "prompted",
			double: w.linear,
			session,
			promptBody: long,
		});
		const res = await w.sendWebhook(JSON.stringify(prompted));
		expect(res.status).toBe(202);
		expect(await res.json()).toEqual({ queued: true, runId });
		const noted = await w.waitForRun(runId, (r) => (r.prompts ?? []).length === 1);
		expect(noted.prompts?.[0]).toMatchObject({ body: long.slice(0, 4096), author: "Pat Human" });
		expect(noted.status).toBe("running");

		const stop = agentSessionWebhook({
			action: "prompted",
			double: w.linear,
			session,
			signal: "stop",
			promptBody: "stop",
		});
		const stopped = await w.sendWebhook(JSON.stringify(stop));
		expect(stopped.status).toBe(202);
		const run = await w.waitForRun(runId);
		expect(run).toMatchObject({ status: "cancelled", error: "stopped in Linear by Pat Human" });
		expect(run.steps[0]?.status).toBe("cancelled");

		const posted = activities(session);
		expect(posted.map((a) => a.content.type)).toEqual(["thought", "action", "thought", "response"]);
		expect(posted[2]?.content.body).toMatch(/^Noted: your message is recorded on the run/);
		expect(posted[3]?.content.body).toMatch(/^Stopped: stopped in Linear by Pat Human/);
		expect(w.linear.stateName(issue)).toBe("Todo");
		expect(w.github.pulls("acme/api").some((p) => p.head.ref.includes("long-job"))).toBe(false);

		// A stop for a finished run, and any event of a session Lisa has no run for, are ignored.
		const late = await w.sendWebhook(
			JSON.stringify(
				agentSessionWebhook({ action: "prompted", double: w.linear, session, signal: "stop" }),
			),
		);
		expect(await late.json()).toEqual({ ignored: `run ${runId} already cancelled` });
		const stranger = w.linear.addAgentSession({ issue: issue.id });
		const unknown = await w.sendWebhook(
			JSON.stringify(
				agentSessionWebhook({
					action: "prompted",
					double: w.linear,
					session: stranger,
					promptBody: "hi",
				}),
			),
		);
		expect(await unknown.json()).toEqual({
			ignored: `no run belongs to agent session ${stranger.id}`,
		});
	});
});
