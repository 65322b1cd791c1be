import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Octokit } from "octokit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type GitHubDouble, startGitHubDouble } from "../../../test/doubles/github/server";
import { bareRepo } from "../../../test/support/git";
import { GitHubTracker } from "./issues";

const REPO = "acme/api";
let dir: string;
let github: GitHubDouble;
let tracker: GitHubTracker;

beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-gh-epics-"));
	const repo = await bareRepo(dir, "api");
	github = await startGitHubDouble({ repos: { [REPO]: repo.path } });
	// Real octokit without waits: quick retries, writes not spaced out (as pulls/client.test.ts does).
	const octokit = new Octokit({
		auth: github.token,
		baseUrl: github.url,
		throttle: { enabled: false },
		retry: { retryAfterBaseValue: 1 },
	});
	tracker = new GitHubTracker(octokit, { defaultRepo: () => REPO });
});
beforeEach(() => github.setFeatures({ subIssues: true, dependencies: true }));
afterAll(async () => {
	await github.stop();
	await rm(dir, { recursive: true, force: true });
});

const marker = (run: string, task: string) => `<!-- lisa-epic ${run} task ${task} -->`;
const sub = (title: string, m: string, state = "open") => ({
	title,
	body: `Do ${title}.\n\n${m}`,
	marker: m,
	state,
});
const epicIssue = () => {
	const epic = github.addIssue(REPO, { title: "Epic", labels: ["lisa-epic"] });
	return { epic, id: `${REPO}#${epic.number}` };
};
const issueOf = (id: string) => {
	const number = Number(id.split("#")[1]);
	const issue = github.issues(REPO).find((i) => i.number === number);
	if (!issue) throw new Error(`no issue ${id}`);
	return issue;
};

describe("GitHub epics (against the REST double)", () => {
	it("creates sub-issues of the epic, records a dependency once, and finds each by its marker", async () => {
		const { epic, id } = epicIssue();
		const first = await tracker.epics.createSubIssue(id, sub("Model", marker("R1", "01")));
		const second = await tracker.epics.createSubIssue(
			`#${epic.number}`,
			sub("API", marker("R1", "02"), "in progress"),
		);
		const a = issueOf(first.id);
		const b = issueOf(second.id);
		expect(first).toEqual({
			id: `${REPO}#${a.number}`,
			key: `${REPO}#${a.number}`,
			url: a.html_url,
		});
		expect(a.body).toBe(`Do Model.\n\n${marker("R1", "01")}`);
		expect(b.labels.map((l) => l.name)).toEqual(["in progress"]);
		// Added by id, which is not the number.
		expect(a.id).not.toBe(a.number);
		expect(github.subIssues(REPO, epic.number).map((i) => i.number)).toEqual([a.number, b.number]);

		await tracker.epics.addBlocker(second.id, first.id);
		await tracker.epics.addBlocker(second.id, first.id);
		expect(github.blockedBy(REPO, b.number).map((i) => i.number)).toEqual([a.number]);
		expect(github.blockedBy(REPO, a.number)).toEqual([]);

		expect(await tracker.epics.findSubIssue(id, marker("R1", "02"))).toEqual(second);
		expect(await tracker.epics.findSubIssue(id, marker("R1", "03"))).toBeUndefined();
	});

	it("matches only Lisa's issues carrying the marker in their body", async () => {
		const { id } = epicIssue();
		const wanted = marker("R2", "01");
		// Someone else's issue copying the marker, the marker in a title, another run's marker.
		github.addIssue(REPO, { title: "Copy", body: `Hi ${wanted}`, user: "mallory" });
		github.addIssue(REPO, { title: wanted, body: "no marker" });
		github.addIssue(REPO, { title: "Old", body: marker("R20", "01") });
		expect(await tracker.epics.findSubIssue(id, wanted)).toBeUndefined();
		github.setFeatures({ subIssues: false });
		expect(await tracker.epics.findSubIssue(id, wanted)).toBeUndefined();

		const bad = await tracker.epics.findSubIssue(id, "<!-- -->").catch((e) => e);
		expect(bad).toMatchObject({ name: "TrackerError", transient: false });
		const lost = await tracker.epics
			.createSubIssue(id, { ...sub("Lost", wanted), body: "no marker" })
			.catch((e) => e);
		expect(lost.message).toMatch(/does not carry its marker/);
	});

	it("without sub-issues or dependencies, still creates the issue and finds it by its marker", async () => {
		github.setFeatures({ subIssues: false, dependencies: false });
		const { epic, id } = epicIssue();
		const made = await tracker.epics.createSubIssue(id, sub("Plain", marker("R3", "01")));
		const next = await tracker.epics.createSubIssue(id, sub("Next", marker("R3", "02")));
		expect(issueOf(made.id).body).toContain(marker("R3", "01"));
		await tracker.epics.addBlocker(next.id, made.id);
		expect(github.blockedBy(REPO, issueOf(next.id).number)).toEqual([]);
		expect(await tracker.epics.findSubIssue(id, marker("R3", "01"))).toEqual(made);
		github.setFeatures({ subIssues: true, dependencies: true });
		expect(github.subIssues(REPO, epic.number)).toEqual([]);
	});

	it("adds a sub-issue created before a crash kept it from being added, when found again", async () => {
		const { epic, id } = epicIssue();
		const orphan = github.addIssue(REPO, { title: "Orphan", body: `x\n${marker("R4", "01")}` });
		const found = await tracker.epics.findSubIssue(id, marker("R4", "01"));
		expect(found?.id).toBe(`${REPO}#${orphan.number}`);
		expect(github.subIssues(REPO, epic.number).map((i) => i.number)).toEqual([orphan.number]);
	});

	it("posts a comment, edits it in place, and says when it is gone", async () => {
		const { epic, id } = epicIssue();
		const commentId = await tracker.comment(id, "Planning…");
		await tracker.epics.editComment(id, commentId, "1 of 2 tasks done");
		expect(github.comments(REPO, epic.number).map((c) => [String(c.id), c.body])).toEqual([
			[commentId, "1 of 2 tasks done"],
		]);
		const gone = await tracker.epics.editComment(id, "99999999", "x").catch((e) => e);
		expect(gone).toMatchObject({ name: "TrackerError", transient: false });
		const notAnId = await tracker.epics.editComment(id, "abc", "x").catch((e) => e);
		expect(notAnId.message).toMatch(/not a GitHub comment id/);
	});

	it("adds a label, which GitHub creates when missing", async () => {
		const { epic, id } = epicIssue();
		await tracker.epics.addLabel(id, "needs-spec");
		await tracker.epics.addLabel(id, "needs-spec");
		expect(issueOf(`${REPO}#${epic.number}`).labels.map((l) => l.name)).toEqual([
			"lisa-epic",
			"needs-spec",
		]);
	});

	it("reports a lasting 5xx as transient, and an unknown issue as not", async () => {
		const { id } = epicIssue();
		github.failNext(4, { status: 500 });
		const down = await tracker.epics
			.createSubIssue(id, sub("X", marker("R5", "01")))
			.catch((e) => e);
		expect(down).toMatchObject({ name: "TrackerError", transient: true });
		expect(down.message).toMatch(/^GitHub: creating a sub-issue of acme\/api#\d+ failed/);
		const missing = await tracker.epics.addBlocker(id, `${REPO}#9999`).catch((e) => e);
		expect(missing).toMatchObject({ name: "TrackerError", transient: false });
	});
});
