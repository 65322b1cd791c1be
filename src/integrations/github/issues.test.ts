import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubDouble, startGitHubDouble } from "../../../test/doubles/github/server";
import { bareRepo } from "../../../test/support/git";
import { GitHubTracker, statusChange } from "./issues";
import { parseGitHubIssueRef } from "./refs";

const REPO = "acme/api";
const WORKFLOW = ["open", "in progress", "in review", "merged"];
let dir: string;
let github: GitHubDouble;
let tracker: GitHubTracker;

beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-gh-"));
	const repo = await bareRepo(dir, "api");
	github = await startGitHubDouble({ repos: { [REPO]: repo.path } });
	tracker = GitHubTracker.fromEnv(github.token, github.url, { defaultRepo: () => REPO });
});
afterAll(async () => {
	await github.stop();
	await rm(dir, { recursive: true, force: true });
});

const labels = (n: number) =>
	(github.issues(REPO).find((i) => i.number === n)?.labels ?? []).map((l) => l.name);

describe("GitHub issue references and status labels", () => {
	it("parses owner/name#n, issue URLs and #n in the default repository", () => {
		expect(parseGitHubIssueRef("acme/api#12")).toEqual({ repo: "acme/api", number: 12 });
		expect(parseGitHubIssueRef("https://github.com/acme/api/issues/12#issuecomment-1")).toEqual({
			repo: "acme/api",
			number: 12,
		});
		expect(parseGitHubIssueRef("#12", "acme/web")).toEqual({ repo: "acme/web", number: 12 });
		expect(parseGitHubIssueRef("12")).toBeUndefined();
		expect(parseGitHubIssueRef("ENG-12", "acme/web")).toBeUndefined();
	});

	it("moves between status labels, with open and closed as the issue's own state", () => {
		expect(statusChange(["lisa"], "in progress", WORKFLOW)).toEqual({
			add: "in progress",
			remove: [],
			state: "open",
		});
		expect(statusChange(["lisa", "In Progress"], "in review", WORKFLOW)).toEqual({
			add: "in review",
			remove: ["In Progress"],
			state: "open",
		});
		expect(statusChange(["lisa", "in progress"], "open", WORKFLOW)).toEqual({
			remove: ["in progress"],
			state: "open",
		});
		expect(statusChange(["in review", "bug"], "closed", WORKFLOW)).toEqual({
			remove: ["in review"],
			state: "closed",
		});
	});
});

describe("GitHub Issues adapter (against the REST double)", () => {
	it("reads an issue by reference, and refuses unknown issues and pull requests", async () => {
		const issue = github.addIssue(REPO, { title: "Fix it", body: "Details", labels: ["lisa"] });
		const expected = {
			id: `${REPO}#${issue.number}`,
			key: `${REPO}#${issue.number}`,
			title: "Fix it",
			description: "Details",
			url: issue.html_url,
			teamId: REPO,
			labels: ["lisa"],
			state: "open",
			closed: false,
		};
		expect(await tracker.fetchIssue(`#${issue.number}`)).toEqual(expected);
		expect(await tracker.fetchIssue(issue.html_url)).toEqual(expected);
		const missing = await tracker.fetchIssue(`${REPO}#999`).catch((e) => e);
		expect(missing).toMatchObject({
			transient: false,
			message: `GitHub issue ${REPO}#999 was not found`,
		});
		const bad = await tracker.fetchIssue("ENG-1").catch((e) => e);
		expect(bad).toMatchObject({ transient: false });
	});

	it("lists open labelled issues without another status as the next issues, oldest first", async () => {
		const a = github.addIssue(REPO, { title: "Queued A", labels: ["lisa"] });
		const b = github.addIssue(REPO, { title: "Queued B", labels: ["lisa", "bug"] });
		github.addIssue(REPO, { title: "Being worked on", labels: ["lisa", "in progress"] });
		github.addIssue(REPO, { title: "Not for Lisa", labels: ["bug"] });
		const next = await tracker.nextIssues({
			team: REPO,
			label: "lisa",
			state: "open",
			workflow: WORKFLOW,
		});
		const titles = next.map((i) => i.title);
		expect(titles.indexOf("Queued A")).toBeLessThan(titles.indexOf("Queued B"));
		expect(titles).not.toContain("Being worked on");
		expect(titles).not.toContain("Not for Lisa");
		expect(next.find((i) => i.title === "Queued A")?.id).toBe(`${REPO}#${a.number}`);
		expect(b.number).toBeGreaterThan(a.number);
		const working = await tracker.nextIssues({
			team: REPO,
			label: "lisa",
			state: "in progress",
			workflow: WORKFLOW,
		});
		expect(working.map((i) => i.title)).toEqual(["Being worked on"]);
	});

	it("moves through the workflow with labels, removes the trigger label and comments as the token's user", async () => {
		const issue = github.addIssue(REPO, { title: "Work it", labels: ["lisa", "bug"] });
		const id = `${REPO}#${issue.number}`;
		await tracker.moveTo(id, "in progress", WORKFLOW);
		expect(labels(issue.number)).toEqual(["lisa", "bug", "in progress"]);
		await tracker.moveTo(id, "in review", WORKFLOW);
		expect(labels(issue.number)).toEqual(["lisa", "bug", "in review"]);
		await tracker.removeLabel(id, "LISA");
		await tracker.removeLabel(id, "lisa");
		expect(labels(issue.number)).toEqual(["bug", "in review"]);
		await tracker.moveTo(id, "closed", WORKFLOW);
		const closed = github.issues(REPO).find((i) => i.number === issue.number);
		expect(closed).toMatchObject({ state: "closed" });
		expect(closed?.labels.map((l) => l.name)).toEqual(["bug"]);
		expect(await tracker.fetchIssue(id)).toMatchObject({
			state: "closed",
			closed: true,
			labels: ["bug"],
		});
		await tracker.comment(id, "Done");
		expect(github.comments(REPO, issue.number).map((c) => [c.user.login, c.body])).toEqual([
			[github.login, "Done"],
		]);
	});
});
