import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branches, git } from "../../../test/support/git";
import { createTaskWorld, type TaskWorld } from "../../../test/support/task";

// The planning step through the real task code: two bare repos checked out for the fake agent, the
// plan read and validated, an invalid plan retried once with its errors.

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld({}, { moreRepos: ["web"] });
});
afterAll(() => w.stop());

const plan = (steps: { repo: string; scope: string; order: number }[]) =>
	`lisa-fake: plan=${JSON.stringify({ steps })}`;

describe("planning step", () => {
	it("plans over read-only checkouts of every repo and reports the validated plan", async () => {
		const runId = await w.newRun(
			{
				title: "Export reports",
				description: [
					plan([
						{ repo: "web", scope: "Add the export button", order: 2 },
						{ repo: "api", scope: "Add GET /export", order: 1 },
					]),
					"lisa-fake@plan: plan-scribble",
				].join("\n"),
			},
			"",
			{ plan: true },
		);
		const report = await w.runTask(runId);
		const expected = {
			steps: [
				{ repo: "api", scope: "Add GET /export", order: 1 },
				{ repo: "web", scope: "Add the export button", order: 2 },
			],
		};
		expect(report).toMatchObject({ outcome: "succeeded", provider: "claude", plan: expected });
		expect((await w.run(runId)).steps[0]?.report?.plan).toEqual(expected);

		// One agent run, in the planning directory, with the planning-only prompt.
		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(1);
		const dir = path.join(w.workspace(runId), "plan");
		expect(calls[0]).toMatchObject({ cli: "claude", target: "plan", cwd: dir });
		expect(calls[0]?.prompt).toContain("Do NOT implement anything");
		expect(calls[0]?.prompt).toContain("- `web` — checked out at `repos/web`");
		expect(calls[0]?.prompt).toContain(`write the plan file \`${dir}/.lisa-plan.json\``);

		// The checkouts were each repo's base; nothing was pushed and no PR opened.
		for (const name of ["api", "web"]) {
			expect(calls[0]?.checkouts?.[name]).toEqual({
				head: await git(w.repos[name]?.path as string, "rev-parse", "main"),
				status: "",
			});
			expect(await branches(w.repos[name]?.path as string)).toEqual(["main"]);
			expect(w.github.pulls(`acme/${name}`)).toEqual([]);
		}
		// The attempt's workspace went when it ended.
		expect(existsSync(dir)).toBe(false);
		const events = await w.events(runId);
		expect(events.map((e) => e.type)).toEqual(
			expect.arrayContaining(["plan.checked_out", "agent.started", "plan.discarded", "plan.valid"]),
		);
		expect(events.find((e) => e.type === "plan.discarded")?.message).toMatch(
			/changed api, web; the changes were discarded/,
		);
		expect(events.find((e) => e.type === "plan.valid")?.message).toBe(
			"plan (try 1): api (order 1), web (order 2)",
		);
	});

	it("shows an invalid plan's errors to the agent once, then takes the corrected plan", async () => {
		const runId = await w.newRun(
			{
				title: "Retry the plan",
				description: [
					'lisa-fake: plan-first={"steps":[{"repo":"mobile","scope":"x","order":1}]}',
					plan([{ repo: "web", scope: "Only the UI", order: 1 }]),
					"lisa-fake@plan: plan-scribble",
				].join("\n"),
			},
			"",
			{ plan: true },
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({
			outcome: "succeeded",
			plan: { steps: [{ repo: "web", scope: "Only the UI", order: 1 }] },
		});
		const calls = await w.agents.callsOf(runId);
		expect(calls).toHaveLength(2);
		expect(calls[0]?.prompt).not.toContain("[PLAN RETRY]");
		expect(calls[1]?.prompt.startsWith("[PLAN RETRY]")).toBe(true);
		expect(calls[1]?.prompt).toContain(
			'- steps.0.repo: "mobile" is not a configured repo (api, web)',
		);
		// What the first try wrote into the checkouts was discarded before the second.
		expect(calls[1]?.checkouts?.web).toEqual({
			head: await git(w.repos.web?.path as string, "rev-parse", "main"),
			status: "",
		});
		const verdicts = (await w.events(runId)).filter(
			(e) => e.type.startsWith("plan.v") || e.type === "plan.invalid",
		);
		expect(verdicts.map((e) => [e.type, e.message])).toEqual([
			[
				"plan.invalid",
				'invalid plan (try 1): steps.0.repo: "mobile" is not a configured repo (api, web); asking the agent again with these errors',
			],
			["plan.valid", "plan (try 2): web (order 1)"],
		]);
	});

	it("fails for good after a second invalid plan, with both tries' reasons", async () => {
		const runId = await w.newRun(
			{
				title: "Bad plans",
				description: [
					'lisa-fake: plan-first={"steps":[{"repo":"mobile","scope":"x","order":1}]}',
					plan([
						{ repo: "api", scope: "a", order: 1 },
						{ repo: "api", scope: "b", order: 3 },
					]),
				].join("\n"),
			},
			"",
			{ plan: true },
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed", transient: false });
		expect(report?.error).toBe(
			'the planning agent wrote an invalid plan 2 times: try 1: steps.0.repo: "mobile" is not a configured repo (api, web) | try 2: steps.1.repo: "api" appears more than once; orders must be contiguous from 1: found 1, 3 (missing 2)',
		);
		expect(report?.plan).toBeUndefined();
		expect(await w.agents.callsOf(runId)).toHaveLength(2);
		// A plan is about no single repository: no guardrail is learnt from it.
		expect(await w.store.guardrails("*")).toEqual([]);
	});

	it("fails when the agent's plan is not JSON, twice", async () => {
		const runId = await w.newRun(
			{ title: "No plan", description: "lisa-fake: plan=not json" },
			"",
			{ plan: true },
		);
		const report = await w.runTask(runId);
		expect(report).toMatchObject({ outcome: "failed", transient: false });
		expect(report?.error).toMatch(/try 1: \.lisa-plan\.json is not valid JSON: .* \| try 2: /);
	});
});
