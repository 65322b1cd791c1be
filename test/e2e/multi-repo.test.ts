import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newRun, planStep } from "../../src/domain/run";
import { handleStepFinished } from "../../src/pipeline/steps";
import { planDirective } from "../doubles/agents/directives";
import { branches } from "../support/git";
import { createStackWorld, type StackWorld } from "../support/stack";
import type { ApiRun } from "../support/world";

// Multi-repo runs (docs/multi-repo.md › Multi-repo runs) on the local stack: three bare repos, a
// fake agent that plans and then implements, the real pipeline, store, queues and agent task
// processes.

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({
		moreRepos: ["web", "docs"],
		configExtra: "limits: {parallel_steps: 2}",
	});
});
afterAll(() => w.stop());

type Event = { type: string; step?: number; message: string; data?: Record<string, unknown> };
const WAIT = 180_000;

async function start(title: string, description: string) {
	const issue = w.issue(title, description);
	const res = await w.sendWebhook(w.createdWebhook(issue));
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	return { issue, runId };
}
const events = async (runId: string) =>
	(await w.api<{ events: Event[] }>(`/api/runs/${runId}/events?limit=500`)).body.events;
const prOf = (repo: string, branch: string) =>
	w.github.pulls(`acme/${repo}`).find((p) => p.head.ref === branch);
const commentsOf = (issueId: string) =>
	w.linear.state.comments.filter((c) => c.issueId === issueId).map((c) => c.body);
const related = (body: string | null | undefined) =>
	body?.match(/<!-- lisa:related -->[\s\S]*?<!-- \/lisa:related -->/)?.[0] ?? "";

describe("multi-repo runs", () => {
	it("plans, then opens one PR per repo in plan order, the later one told of the earlier, each linking the other", async () => {
		const { issue, runId } = await start(
			"Export reports",
			planDirective([
				{ repo: "web", scope: "Add the export button that calls GET /export", order: 2 },
				{ repo: "api", scope: "Add GET /export returning CSV", order: 1 },
			]),
		);
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("succeeded");
		const plan = {
			steps: [
				{ repo: "api", scope: "Add GET /export returning CSV", order: 1 },
				{ repo: "web", scope: "Add the export button that calls GET /export", order: 2 },
			],
		};
		expect(run.plan).toEqual(plan);
		const branch = `feat/${issue.identifier.toLowerCase()}-export-reports`;
		expect(run.steps.map((s) => [s.index, s.kind ?? s.repo, s.order, s.status])).toEqual([
			[0, "plan", undefined, "succeeded"],
			[1, "api", 1, "succeeded"],
			[2, "web", 2, "succeeded"],
		]);
		const api = prOf("api", branch);
		const web = prOf("web", branch);
		expect(run.prUrls).toEqual([api?.html_url, web?.html_url]);
		expect(await branches(w.repos.docs?.path as string)).toEqual(["main"]); // not in the plan

		// The agent planned first, then implemented api, then web, told of api's branch and PR.
		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.target)).toEqual(["plan", "api", "web"]);
		const [planning, first, second] = calls;
		expect(planning?.prompt).toContain("Do NOT implement anything");
		expect(first?.prompt).toContain("Add GET /export returning CSV");
		expect(first?.prompt).not.toContain("## Previous steps");
		expect(second?.prompt).toContain("Add the export button that calls GET /export");
		expect(second?.prompt).toContain(`- **api**: branch \`${branch}\` — PR: ${api?.html_url}`);

		// Each PR lists the other in its related section, once.
		expect(related(api?.body)).toContain(`- web: ${web?.html_url}`);
		expect(related(api?.body)).not.toContain(`${api?.html_url}`);
		expect(related(web?.body)).toContain(`- api: ${api?.html_url}`);
		for (const pr of [api, web]) expect(pr?.body?.match(/<!-- lisa:related -->/g)).toHaveLength(1);

		// The timeline: planning's verdict, the plan accepted, then api finished before web started.
		const timeline = await events(runId);
		const types = timeline.map((e) => e.type);
		expect(types).toEqual(
			expect.arrayContaining(["run.planning", "plan.valid", "plan.accepted", "run.succeeded"]),
		);
		const at = (type: string, step: number) =>
			timeline.findIndex((e) => e.type === type && e.step === step);
		expect(at("step.launched", 0)).toBeLessThan(at("plan.accepted", 0));
		expect(at("plan.accepted", 0)).toBeLessThan(at("step.launched", 1));
		expect(at("step.succeeded", 1)).toBeLessThan(at("step.launched", 2));

		// The tracker: planning, the plan, the first PR, then both PRs.
		const comments = commentsOf(issue.id);
		expect(comments[0]).toMatch(
			/^Lisa is working on this issue \(planning across api, web, docs\)/,
		);
		expect(comments[1]).toMatch(
			/^Lisa planned this issue across 2 repositories, in this order:\n1\. api — Add GET \/export returning CSV\n2\. web — Add the export button/,
		);
		expect(comments[2]).toMatch(
			new RegExp(
				`^Lisa opened a pull request in api \\(step 1 of 2\\): ${api?.html_url}\\nNext: web\\.`,
			),
		);
		expect(comments[3]).toContain(
			`Lisa opened 2 pull requests for this issue:\n- ${api?.html_url}\n- ${web?.html_url}`,
		);
		expect(comments).toHaveLength(4);
		expect(w.linear.stateName(issue)).toBe("In Review");
	});

	it("retries an invalid plan once with its errors, then fails the run with the reasons", async () => {
		const { issue, runId } = await start(
			"Plan badly",
			[
				'lisa-fake: plan-first={"steps":[{"repo":"mobile","scope":"x","order":1}]}',
				planDirective([
					{ repo: "api", scope: "a", order: 1 },
					{ repo: "api", scope: "b", order: 2 },
				]),
			].join("\n"),
		);
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		const unknown = 'steps.0.repo: "mobile" is not a configured repo (api, web, docs)';
		const duplicate = 'steps.1.repo: "api" appears more than once';
		expect(run.error).toBe(
			`planning failed: the planning agent wrote an invalid plan 2 times: try 1: ${unknown} | try 2: ${duplicate}`,
		);
		expect(run.plan).toBeUndefined();
		expect(run.steps).toEqual([expect.objectContaining({ kind: "plan", status: "failed" })]);

		const calls = await w.agents.callsOf(runId);
		expect(calls.map((c) => c.target)).toEqual(["plan", "plan"]);
		expect(calls[1]?.prompt).toContain(`- ${unknown}`);
		const verdicts = (await events(runId)).filter((e) => e.type === "plan.invalid");
		expect(verdicts.map((e) => e.data?.errors)).toEqual([[unknown], [duplicate]]);
		expect(w.github.pulls("acme/api").filter((p) => p.head.ref.includes("plan-badly"))).toEqual([]);
		const comments = commentsOf(issue.id);
		expect(comments.at(-1)).toContain(`Lisa could not resolve this issue: ${run.error}`);
		expect(w.linear.stateName(issue)).toBe("Todo");
	});

	it("a failing first step stops the second: no second PR, the run failed", async () => {
		const { issue, runId } = await start(
			"Break the api",
			[
				planDirective([
					{ repo: "api", scope: "Change the API", order: 1 },
					{ repo: "web", scope: "Use it", order: 2 },
				]),
				"lisa-fake@api: stderr=fatal: the api build is on fire",
				"lisa-fake@api: exit=3",
			].join("\n"),
		);
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		expect(run.steps.map((s) => [s.repo, s.status])).toEqual([
			["*", "succeeded"],
			["api", "failed"],
			["web", "cancelled"],
		]);
		expect(run.error).toBe(
			"step 1 (api) failed: claude exited with code 3: fatal: the api build is on fire\nNo step succeeded.\nCancelled: step 2 (web)",
		);
		expect((await w.agents.callsOf(runId)).map((c) => c.target)).toEqual(["plan", "api"]);
		expect(w.github.pulls("acme/web").filter((p) => p.head.ref.includes("break-the-api"))).toEqual(
			[],
		);
		expect(commentsOf(issue.id).at(-1)).toContain("Steps:\n- api: failed\n- web: cancelled");
	});

	it("a failed step after a successful one: the comment says which succeeded, with its PR", async () => {
		const { issue, runId } = await start(
			"Half done",
			[
				planDirective([
					{ repo: "docs", scope: "Document it", order: 1 },
					{ repo: "api", scope: "Change the API", order: 2 },
					{ repo: "web", scope: "Use it", order: 3 },
				]),
				"lisa-fake@api: no-commit",
			].join("\n"),
		);
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		const docs = prOf("docs", `feat/${issue.identifier.toLowerCase()}-half-done`);
		expect(docs).toBeDefined();
		expect(run.prUrls).toEqual([docs?.html_url]);
		expect(run.error).toBe(
			`step 2 (api) failed: the agent finished without committing any change\nSucceeded: step 1 (docs) ${docs?.html_url}\nCancelled: step 3 (web)`,
		);
		// api's agent ran three times (the gate's retries), web's never.
		expect((await w.agents.callsOf(runId)).map((c) => c.target)).toEqual([
			"plan",
			"docs",
			"api",
			"api",
			"api",
		]);
		expect(commentsOf(issue.id).at(-1)).toContain(
			`Steps:\n- docs: succeeded: ${docs?.html_url}\n- api: failed\n- web: cancelled`,
		);
	});

	it("runs steps of the same order side by side when parallel_steps allows", async () => {
		const { issue, runId } = await start(
			"Side by side",
			planDirective([
				{ repo: "api", scope: "Change the API", order: 1 },
				{ repo: "web", scope: "Change the UI independently", order: 1 },
			]),
		);
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("succeeded");
		const timeline = await events(runId);
		const launched = timeline.flatMap((e, i) => (e.type === "step.launched" ? [[e.step, i]] : []));
		const firstFinish = timeline.findIndex((e) => e.type === "step.succeeded" && e.step !== 0);
		// Both steps were launched before either finished.
		expect(launched.filter(([step]) => step === 1 || step === 2)).toHaveLength(2);
		for (const [, i] of launched) expect(i).toBeLessThan(firstFinish);
		const branch = `feat/${issue.identifier.toLowerCase()}-side-by-side`;
		const api = prOf("api", branch);
		const web = prOf("web", branch);
		expect(related(api?.body)).toContain(`- web: ${web?.html_url}`);
		expect(related(web?.body)).toContain(`- api: ${api?.html_url}`);
		// Neither was told of the other: they share an order.
		for (const call of (await w.agents.callsOf(runId)).filter((c) => c.target !== "plan"))
			expect(call.prompt).not.toContain("## Previous steps");
	});

	it("a one-repo plan runs as a normal single-repo run", async () => {
		const { issue, runId } = await start(
			"Only the UI",
			planDirective([{ repo: "web", scope: "Restyle the button", order: 1 }]),
		);
		const run: ApiRun = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("succeeded");
		expect(run.steps.map((s) => s.kind ?? s.repo)).toEqual(["plan", "web"]);
		const pr = prOf("web", `feat/${issue.identifier.toLowerCase()}-only-the-ui`);
		expect(run.prUrls).toEqual([pr?.html_url]);
		expect(pr?.body).not.toContain("lisa:related");
		const comments = commentsOf(issue.id);
		expect(comments[1]).toMatch(
			/^Lisa planned this issue: one repository needs a change\.\n1\. web — Restyle the button/,
		);
		expect(comments.at(-1)).toMatch(/^Lisa opened a pull request for this issue:/);
	});

	it("checks a reported plan again: a plan naming an unconfigured repo fails the run, nothing launches", async () => {
		const stack = w.stack;
		const state = stack?.deps.config();
		if (!stack || state?.status !== "ok") throw new Error("no stack or config");
		const issue = w.issue("Forged plan");
		const now = new Date().toISOString();
		const runId = ulid();
		await stack.deps.store.createRun({
			...newRun({ runId, source: "linear", issueId: issue.id, trigger: "api", now }),
			status: "planning",
			config: state.config,
			issue: { id: issue.id, key: issue.identifier, title: issue.title, description: "" },
			steps: [{ ...planStep(0), status: "running", launchedAt: now }],
		});
		// A step report that skipped the task's checks (a bug, or a forged message).
		await handleStepFinished(stack.deps, {
			runId,
			stepIndex: 0,
			attempt: 1,
			outcome: "succeeded",
			plan: { steps: [{ repo: "billing", scope: "x", order: 1 }] },
		});
		const run = await w.waitForRun(runId, undefined, WAIT);
		const reason = 'steps.0.repo: "billing" is not a configured repo (api, web, docs)';
		expect(run).toMatchObject({
			status: "failed",
			error: `planning failed: the plan is invalid: ${reason}`,
		});
		expect(run.plan).toBeUndefined();
		expect(run.steps).toHaveLength(1);
		const rejected = (await events(runId)).find((e) => e.type === "plan.rejected");
		expect(rejected?.message).toBe(reason);
		expect(await w.agents.callsOf(runId)).toEqual([]);
	});
});
