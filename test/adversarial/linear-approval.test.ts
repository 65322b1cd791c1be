import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import type { RunAnswer } from "../../src/api/schemas";
import type { Run } from "../../src/domain/run";
import type { AttemptUsage } from "../../src/domain/usage";
import { handleRunRequested } from "../../src/pipeline/intake";
import type { DoubleAgentSession, DoubleUser } from "../doubles/linear/server";
import { agentSessionWebhook, linearHeaders, type WebhookActor } from "../doubles/linear/webhook";
import { type PipelineWorld, pipelineWorld } from "../support/pipeline";

// The outside review's item 7: a `continue` in a Linear agent session approved spending from any
// workspace user, and the approval recorded a display name anyone can choose. Now Linear is asked
// who wrote it: only an active member of the issue's team, not a guest, approves, and the approval
// records the user's id. Through the real HTTP app (signed webhooks), dynalite, fauxqs, the
// pipeline's handlers and the Linear double behind the real client.

const TOKEN = "lisa_adversarial_admin_token";
const PR = "https://github.com/acme/api/pull/7";
let w: PipelineWorld;
let app: ReturnType<typeof createApp>;
let member: DoubleUser;
let guest: DoubleUser;
let outsider: DoubleUser;
let departed: DoubleUser;

beforeAll(async () => {
	w = await pipelineWorld({ limits: "max_run_cost_usd: 5" });
	app = createApp({ ...w.deps, settings: { ...w.deps.settings, apiToken: TOKEN } });
	w.linear.addTeam({ key: "OPS", name: "Operations" });
	member = w.linear.addUser({ name: "Mia Member", teams: ["ENG"] });
	guest = w.linear.addUser({ name: "Gil Guest", guest: true, teams: ["ENG"] });
	outsider = w.linear.addUser({ name: "Otto Outsider", teams: ["OPS"] });
	departed = w.linear.addUser({ name: "Dee Departed", active: false, teams: ["ENG"] });
});
afterAll(() => w.stop());

/** An attempt whose agent reported `usd` (as Claude Code does). */
const spent = (usd: number): AttemptUsage => {
	const usage = {
		inputTokens: 1000,
		outputTokens: 100,
		cacheReadTokens: 0,
		cacheWriteTokens: 0,
		costUsd: usd,
	};
	return { runs: [{ model: "claude", ok: true, usage }], total: usage };
};

async function deliver(payload: unknown): Promise<Response> {
	const body = JSON.stringify(payload);
	const secret = w.settings.linear.webhookSecret ?? "";
	const res = await app.request("/webhooks/linear", {
		method: "POST",
		body,
		headers: linearHeaders(body, secret),
	});
	await w.settle();
	return res;
}

/** A run delegated to Lisa in a session by the member, paused at its cost limit. */
async function pausedInSession(
	title: string,
): Promise<{ runId: string; session: DoubleAgentSession }> {
	const issue = w.issue(title);
	const created = agentSessionWebhook({
		action: "created",
		double: w.linear,
		issue,
		creator: member,
	});
	const res = await deliver(created);
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	await w.finishTask(runId, 0, 1, {
		error: "stopped: the run's cost reached $5.20 of its $5.00 limit",
		usage: spent(5.2),
		budget: { spentUsd: 5.2, limitUsd: 5 },
	});
	await w.settle();
	expect((await run(runId)).status).toBe("awaiting_approval");
	const session = w.linear.state.agentSessions.find((s) => s.id === created.agentSession.id);
	if (!session) throw new Error("no session");
	return { runId, session };
}

const run = async (runId: string) => (await w.store.getRun(runId)) as Run;

const say = (session: DoubleAgentSession, creator: WebhookActor, promptBody = "continue") =>
	deliver(
		agentSessionWebhook({ action: "prompted", double: w.linear, session, creator, promptBody }),
	);

describe("item 7: who may approve spending in a Linear agent session", () => {
	it("a guest's, a non-member's, a deactivated user's and a forged name's `continue` approve nothing", async () => {
		const { runId, session } = await pausedInSession("Expensive, asked in the session");
		const attempts: [WebhookActor, RegExp][] = [
			[guest, /Gil Guest \(Linear user \S+\) is a guest of the workspace/],
			[outsider, /Otto Outsider \(Linear user \S+\) is not a member of the issue's team ENG/],
			[departed, /Dee Departed \(Linear user \S+\) is deactivated/],
			// The name is the member's, the user is the guest: the id is what counts.
			[{ id: guest.id, name: member.name }, /Gil Guest \(Linear user \S+\) is a guest/],
		];
		for (const [who, why] of attempts) {
			expect((await say(session, who)).status).toBe(202);
			const after = await run(runId);
			expect(after.status).toBe("awaiting_approval");
			expect(after.approvals ?? []).toEqual([]);
			const ignored = (await w.timeline(runId)).filter((e) => e.type === "approval.ignored");
			expect(ignored.at(-1)?.message).toMatch(why);
		}
		expect(w.launchesOf(runId)).toHaveLength(1);
		// Each was told in the session why not.
		const refusals = w.linear.state.agentActivities.filter(
			(a) => a.agentSessionId === session.id && String(a.content.body).startsWith("Not approved"),
		);
		expect(refusals).toHaveLength(attempts.length);
	});

	it("a member's `continue` approves, and the approval records the member's Linear id", async () => {
		const { runId, session } = await pausedInSession("Expensive, approved by a member");
		// Whatever name the webhook carries, the approval names who Linear says the user is.
		expect((await say(session, { id: member.id, name: "Someone Else" })).status).toBe(202);
		const resumed = await run(runId);
		expect(resumed.status).toBe("running");
		expect(resumed.approvals).toEqual([
			expect.objectContaining({ by: "Mia Member", byId: member.id, via: "linear", limitUsd: 10.2 }),
		]);
		expect(w.launchesOf(runId)).toEqual([
			{ step: 0, attempt: 1 },
			{ step: 0, attempt: 2 },
		]);
		const approved = (await w.timeline(runId)).find((e) => e.type === "run.approved");
		expect(approved?.data).toMatchObject({ by: "Mia Member", byId: member.id });

		const answer = await app.request(`/api/runs/${runId}`, {
			headers: { authorization: `Bearer ${TOKEN}` },
		});
		expect(answer.status).toBe(200);
		const body = (await answer.json()) as RunAnswer;
		expect(body.approvals).toEqual([
			expect.objectContaining({ by: "Mia Member", byId: member.id, via: "linear" }),
		]);
	});

	it("in the session of a finished run, a round of its pull request waiting for approval follows the same rule", async () => {
		const issue = w.issue("Finished, then a round past the limit");
		const created = agentSessionWebhook({
			action: "created",
			double: w.linear,
			issue,
			creator: member,
		});
		const { runId: parentId } = (await (await deliver(created)).json()) as { runId: string };
		await w.finishTask(parentId, 0, 1, { prUrl: PR, branch: "feat/r", usage: spent(5.5) });
		await w.settle();
		const parent = await run(parentId);
		expect(parent.status).toBe("succeeded");
		const request = await w.createRound(parent, PR, "feat/r");
		const roundId = request.runId as string;
		const at = w.now().toISOString();
		const rounds = [{ runId: roundId, trigger: "mention" as const, prUrl: PR, at }];
		await w.store.updateRun(parent, { set: { followUps: { rounds } } }, at);
		await handleRunRequested(w.deps, request);
		expect((await run(roundId)).status).toBe("awaiting_approval");
		const session = w.linear.state.agentSessions.find((s) => s.id === created.agentSession.id);
		if (!session) throw new Error("no session");

		await say(session, guest);
		expect((await run(roundId)).status).toBe("awaiting_approval");
		const refused = (await w.timeline(parentId)).filter((e) => e.type === "approval.ignored");
		expect(refused.at(-1)?.message).toMatch(/Gil Guest \(Linear user \S+\) is a guest/);

		await say(session, member);
		const going = await run(roundId);
		expect(going.status).toBe("running");
		expect(going.approvals).toEqual([
			expect.objectContaining({ by: "Mia Member", byId: member.id, via: "linear" }),
		]);
	});
});
