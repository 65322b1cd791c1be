import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EpicAnswer } from "../../src/api/schemas";
import {
	epicPlanDirective,
	epicPlanFiles,
	needsSpecResearch,
	type PlannedTask,
	withTaskDirective,
} from "../doubles/agents/directives";
import type { GitHubIssue } from "../doubles/github/server";
import { issuesEvent, pullRequestClosedEvent } from "../doubles/github/webhook";
import { createStackWorld, GITHUB_FOLLOWING_MERGES, type StackWorld } from "../support/stack";

// Epics with GitHub Issues as the tracker (docs/epics.md › Epics): sub-issues with blocked-by
// dependencies, and a task done only once its pull request merged (`source_config.merged` set).

const REPO = "acme/api";
const human = "ada";
let w: StackWorld;

beforeAll(async () => {
	w = await createStackWorld({ source: "github", config: GITHUB_FOLLOWING_MERGES });
});
afterAll(() => w.stop());

const WAIT = 240_000;
const t = (id: string, title: string, ...dependsOn: string[]): PlannedTask => ({
	id,
	title,
	repo: "api",
	dependsOn,
});
const DIAMOND = [
	t("01", "Add the model"),
	t("02", "Serve it", "01"),
	t("03", "Show it", "01"),
	t("04", "Document it", "02", "03"),
];

async function startEpic(title: string, body: string) {
	const issue = w.github.addIssue(REPO, { title, body, labels: ["lisa-epic"], user: human });
	const res = await w.sendGitHub(
		"issues",
		issuesEvent(w.github, REPO, issue, { label: "lisa-epic", sender: human }),
	);
	expect(res.status).toBe(202);
	const { runId } = (await res.json()) as { runId: string };
	return { issue, runId };
}
const epicOf = async (runId: string) => (await w.api<EpicAnswer>(`/api/epics/${runId}`)).body;
const statuses = async (runId: string) =>
	Object.fromEntries((await epicOf(runId)).tasks.map((x) => [x.id, x.status]));
const waitFor = (runId: string, want: Record<string, string>) =>
	expect.poll(() => statuses(runId), { timeout: WAIT, interval: 200 }).toEqual(want);
const numberOf = (key?: string) => Number(key?.split("#")[1]);

/** Merges a task's pull request as a person would, and GitHub says so. */
async function merge(runId: string, id: string) {
	const url = (await epicOf(runId)).tasks.find((x) => x.id === id)?.prUrls?.[0];
	const pr = w.github.pulls(REPO).find((p) => p.html_url === url);
	if (!pr) throw new Error(`task ${id} has no pull request`);
	const merged = await w.github.mergePull(REPO, pr.number, { mergedBy: human });
	const res = await w.sendGitHub(
		"pull_request",
		pullRequestClosedEvent(w.github, REPO, merged, human),
	);
	expect(res.status).toBe(202);
}

describe("epics with GitHub Issues", () => {
	it("creates sub-issues blocked by their dependencies and starts a task once the PRs it needs merged", async () => {
		const { issue, runId } = await startEpic("Reports", epicPlanDirective(DIAMOND));
		await waitFor(runId, { "01": "in_review", "02": "waiting", "03": "waiting", "04": "waiting" });

		const epic = await epicOf(runId);
		const subs = w.github.subIssues(REPO, issue.number);
		expect(subs.map((s) => s.title).sort()).toEqual([
			"Add the model",
			"Document it",
			"Serve it",
			"Show it",
		]);
		const sub = (id: string) =>
			w.github
				.issues(REPO)
				.find(
					(i) => i.number === numberOf(epic.tasks.find((x) => x.id === id)?.issue?.key),
				) as GitHubIssue;
		const blockers = (id: string) =>
			w.github
				.blockedBy(REPO, sub(id).number)
				.map((b) => b.title)
				.sort();
		expect(blockers("01")).toEqual([]);
		expect(blockers("02")).toEqual(["Add the model"]);
		expect(blockers("04")).toEqual(["Serve it", "Show it"]);
		expect(sub("04").body).toContain(
			`Blocked by ${REPO}#${sub("02").number}, ${REPO}#${sub("03").number}.`,
		);

		// Its pull request open is not enough: 02 and 03 wait for the merge.
		await merge(runId, "01");
		await waitFor(runId, { "01": "done", "02": "in_review", "03": "in_review", "04": "waiting" });
		await merge(runId, "02");
		await merge(runId, "03");
		await waitFor(runId, { "01": "done", "02": "done", "03": "done", "04": "in_review" });
		await merge(runId, "04");
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("succeeded");
		expect((await epicOf(runId)).phase).toBe("done");
		// Every task merged: so is the epic.
		const now = w.github.issues(REPO).find((i) => i.number === issue.number) as GitHubIssue;
		expect(now.labels.map((l) => l.name)).toEqual(["merged"]);
		// Each sub-issue went to merged; one progress comment on the epic, edited to the end.
		for (const id of ["01", "02", "03", "04"])
			expect(sub(id).labels.map((l) => l.name)).toContain("merged");
		const progress = w.github
			.comments(REPO, issue.number)
			.filter((c) => c.body.includes("tasks done"));
		expect(progress).toHaveLength(1);
		expect(progress[0]?.body).toMatch(/^Lisa resolved this epic: 4 of 4 tasks done\./);
	}, 600_000);

	it("retries a plan with a cycle, escalating, then fails with the reasons on the issue", async () => {
		const cycle = epicPlanFiles([t("01", "One", "02"), t("02", "Two", "01")]);
		const { issue, runId } = await startEpic("Circular", epicPlanDirective(cycle));
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		expect(run.error).toContain("the dependencies form a cycle: 01 → 02 → 01");
		const prompts = (await w.agents.callsOf(runId))
			.filter((c) => c.target === "epic_plan")
			.map((c) => c.prompt.split("\n")[0]);
		expect(prompts).toEqual([
			expect.not.stringMatching(/^\[/),
			expect.stringMatching(/^\[RETRY - MUST COMPLETE\]/),
			expect.stringMatching(/^\[FINAL ATTEMPT\]/),
		]);
		expect(w.github.subIssues(REPO, issue.number)).toEqual([]);
		expect(w.github.comments(REPO, issue.number).at(-1)?.body).toContain(
			"form a cycle: 01 → 02 → 01",
		);
	});

	it("stops at a failing task: its dependents never start, and the epic says why", async () => {
		const files = epicPlanFiles([t("01", "Break"), t("02", "After", "01")]);
		// Task 01's agent fails: the directive is in its sub-issue (the task file's Steps).
		const broken = withTaskDirective(files, "01", "lisa-fake: exit=3");
		const { issue, runId } = await startEpic("Fragile", epicPlanDirective(broken));
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		expect(run.error).toMatch(/^task 01 failed: .+; blocked, so never started: 02$/);
		expect(await statuses(runId)).toEqual({ "01": "failed", "02": "blocked" });
		const progress = w.github
			.comments(REPO, issue.number)
			.filter((c) => c.body.includes("tasks done"));
		expect(progress).toHaveLength(1);
		expect(progress[0]?.body).toContain("Lisa's epic stopped (0 of 2 tasks done): task 01 failed");
	}, 600_000);

	it("labels a vague epic needs-spec with its questions, and a webhook for it starts nothing until the label is removed", async () => {
		const { issue, runId } = await startEpic(
			"Better reports",
			needsSpecResearch(["Which reports?"]),
		);
		const run = await w.waitForRun(runId, undefined, WAIT);
		expect(run.status).toBe("failed");
		const now = w.github.issues(REPO).find((i) => i.number === issue.number) as GitHubIssue;
		expect(now.labels.map((l) => l.name)).toContain("needs-spec");
		expect(w.github.comments(REPO, issue.number).at(-1)?.body).toContain("- Which reports?");
		expect(w.github.subIssues(REPO, issue.number)).toEqual([]);
		const again = await w.sendGitHub(
			"issues",
			issuesEvent(w.github, REPO, now, { label: "lisa-epic", sender: human }),
		);
		expect(await again.json()).toMatchObject({ ignored: expect.stringContaining("needs-spec") });
	});
});
