import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Webhooks } from "@octokit/webhooks";
import { Octokit, RequestError } from "octokit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_GITHUB_TOKEN, type GitHubDouble, signGitHub, startGitHubDouble } from "./server";

const run = promisify(execFile);
const GIT_ENV = {
	...process.env,
	GIT_CONFIG_GLOBAL: "/dev/null",
	GIT_CONFIG_NOSYSTEM: "1",
	GIT_AUTHOR_NAME: "Test",
	GIT_AUTHOR_EMAIL: "test@example.com",
	GIT_COMMITTER_NAME: "Test",
	GIT_COMMITTER_EMAIL: "test@example.com",
};

async function git(cwd: string, ...args: string[]): Promise<string> {
	const { stdout } = await run("git", args, { cwd, env: GIT_ENV });
	return stdout.trim();
}

async function commit(work: string, file: string, text: string): Promise<string> {
	await writeFile(join(work, file), text);
	await git(work, "add", file);
	await git(work, "commit", "-q", "-m", `edit ${file}`);
	return git(work, "rev-parse", "HEAD");
}

const REPO = "acme/app";
let tmp: string;
let bare: string;
let work: string;
const sha: Record<string, string> = {};

beforeAll(async () => {
	tmp = await mkdtemp(join(tmpdir(), "gh-double-"));
	bare = join(tmp, "app.git");
	work = join(tmp, "work");
	await git(tmp, "init", "-q", "--bare", "--initial-branch=main", bare);
	await git(tmp, "clone", "-q", bare, work);
	await git(work, "checkout", "-q", "-b", "main");
	sha.main = await commit(work, "README.md", "hello\n");
	await git(work, "push", "-q", "origin", "main");
	// A branch with nothing beyond main.
	await git(work, "push", "-q", "origin", "main:refs/heads/empty");
	for (const branch of ["feature/x", "feature/y", "feature/z"]) {
		await git(work, "checkout", "-q", "-b", branch, "main");
		sha[branch] = await commit(work, `${branch.replace("/", "-")}.txt`, `${branch}\n`);
		await git(work, "push", "-q", "origin", branch);
	}
});

afterAll(async () => {
	await rm(tmp, { recursive: true, force: true });
});

let double: GitHubDouble;
let octokit: InstanceType<typeof Octokit>;

beforeEach(async () => {
	double = await startGitHubDouble({ repos: { [REPO]: bare } });
	// Throttling off for speed: octokit spaces notification-triggering writes (POST /pulls,
	// POST /issues/{n}/comments) 3 s apart. Dedicated tests below run with the defaults.
	octokit = new Octokit({ auth: double.token, baseUrl: double.url, throttle: { enabled: false } });
});

afterEach(async () => {
	await double.stop();
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function rejection(promise: Promise<unknown>): Promise<RequestError> {
	const err = await promise.then(
		() => undefined,
		(e: unknown) => e,
	);
	expect(err).toBeInstanceOf(RequestError);
	return err as RequestError;
}

const pr = (head: string, title = `PR from ${head}`) =>
	octokit.rest.pulls.create({ owner: "acme", repo: "app", head, base: "main", title, body: "b" });

describe("GitHub double: auth, user and repo", () => {
	it("serves the authenticated user and the repo's default branch read from git", async () => {
		const user = await octokit.rest.users.getAuthenticated();
		expect(user.status).toBe(200);
		expect(user.headers["content-type"]).toBe("application/json; charset=utf-8");
		expect(user.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/);
		expect(user.data).toMatchObject({ login: "lisa-bot", type: "User" });

		const repo = await octokit.rest.repos.get({ owner: "acme", repo: "app" });
		expect(repo.data).toMatchObject({
			full_name: "acme/app",
			default_branch: "main",
			private: true,
			owner: { login: "acme" },
		});
		expect(double.token).toBe(DEFAULT_GITHUB_TOKEN);
	});

	it("rejects a bad token with 401 Bad credentials, without retrying", async () => {
		const bad = new Octokit({ auth: "ghp_wrong", baseUrl: double.url });
		const err = await rejection(bad.rest.users.getAuthenticated());
		expect(err.status).toBe(401);
		expect(err.response?.data).toMatchObject({ message: "Bad credentials" });
		expect(double.requests).toHaveLength(1);
		expect(double.requests[0]?.headers.authorization).toBeUndefined();

		const anonymous = await rejection(new Octokit({ baseUrl: double.url }).request("GET /user"));
		expect(anonymous.status).toBe(401);
	});

	it("accepts a Bearer token and answers 404 for unknown repos and routes", async () => {
		const res = await fetch(`${double.url}/user`, {
			headers: { authorization: `Bearer ${double.token}` },
		});
		expect(res.status).toBe(200);

		const missing = await rejection(octokit.rest.repos.get({ owner: "acme", repo: "nope" }));
		expect(missing.status).toBe(404);
		expect(missing.response?.data).toMatchObject({ message: "Not Found" });
		expect(double.unhandled).toEqual([]);

		const gap = await rejection(octokit.rest.repos.listBranches({ owner: "acme", repo: "app" }));
		expect(gap.status).toBe(404);
		expect(double.unhandled).toEqual([{ method: "GET", path: "/repos/acme/app/branches" }]);
	});
});

describe("GitHub double: pull requests", () => {
	it("creates a PR with 201 and GitHub's shape, validated against the bare repo", async () => {
		const res = await octokit.rest.pulls.create({
			owner: "acme",
			repo: "app",
			head: "feature/x",
			base: "main",
			title: "Fix it",
			body: "Closes #0",
			draft: true,
		});
		expect(res.status).toBe(201);
		expect(res.data).toMatchObject({
			number: 1,
			state: "open",
			title: "Fix it",
			body: "Closes #0",
			draft: true,
			merged: false,
			merged_at: null,
			html_url: "https://github.com/acme/app/pull/1",
			url: `${double.url}/repos/acme/app/pulls/1`,
			user: { login: "lisa-bot", type: "User" },
			head: { ref: "feature/x", sha: sha["feature/x"], label: "acme:feature/x" },
			base: { ref: "main", sha: sha.main, repo: { full_name: "acme/app" } },
		});
		expect(res.data.head.repo?.full_name).toBe("acme/app");
		expect(res.headers.location).toBe(`${double.url}/repos/acme/app/pulls/1`);

		const recorded = double.requests.at(-1);
		expect(recorded).toMatchObject({ method: "POST", path: "/repos/acme/app/pulls", status: 201 });
		expect(recorded?.body).toMatchObject({ head: "feature/x", base: "main", title: "Fix it" });
		expect(recorded?.headers["user-agent"]).toMatch(/octokit/);
		expect(recorded?.headers.authorization).toBeUndefined();
		expect(double.pulls(REPO).map((p) => p.number)).toEqual([1]);
	});

	it("422s when the head branch does not exist", async () => {
		const err = await rejection(pr("no-such-branch"));
		expect(err.status).toBe(422);
		expect(err.message).toMatch(/^Validation Failed: /);
		expect(err.response?.data).toMatchObject({
			message: "Validation Failed",
			errors: [{ resource: "PullRequest", field: "head", code: "invalid" }],
		});
		expect(double.pulls(REPO)).toEqual([]);
	});

	it("422s when head has no commits beyond base", async () => {
		const err = await rejection(pr("empty"));
		expect(err.status).toBe(422);
		expect(err.response?.data).toMatchObject({
			errors: [
				{ resource: "PullRequest", code: "custom", message: "No commits between main and empty" },
			],
		});
	});

	it("422s 'A pull request already exists' for a second open PR on the same head", async () => {
		await pr("feature/x");
		const err = await rejection(pr("acme:feature/x", "again"));
		expect(err.status).toBe(422);
		const data = err.response?.data as { errors: { message: string }[] };
		expect(data.errors[0]?.message).toBe("A pull request already exists for acme:feature/x.");
		expect(err.message).toContain("A pull request already exists for acme:feature/x.");
		expect(double.pulls(REPO)).toHaveLength(1);

		// Once closed, a new PR for the same head is allowed again.
		await octokit.rest.pulls.update({
			owner: "acme",
			repo: "app",
			pull_number: 1,
			state: "closed",
		});
		expect((await pr("feature/x")).data.number).toBe(2);
	});

	it("lists PRs filtered by head in owner:branch form (a bare branch is ignored)", async () => {
		await pr("feature/x");
		await pr("feature/y");
		const byHead = await octokit.rest.pulls.list({
			owner: "acme",
			repo: "app",
			head: "acme:feature/y",
		});
		expect(byHead.data.map((p) => [p.number, p.head.ref])).toEqual([[2, "feature/y"]]);
		// List items carry merged_at but not `merged`, exactly like GitHub.
		expect(byHead.data[0]?.merged_at).toBeNull();
		expect(byHead.data[0]).not.toHaveProperty("merged");

		const bare = await octokit.rest.pulls.list({ owner: "acme", repo: "app", head: "feature/y" });
		expect(bare.data.map((p) => p.number)).toEqual([2, 1]);

		const closed = await octokit.rest.pulls.list({ owner: "acme", repo: "app", state: "closed" });
		expect(closed.data).toEqual([]);
		const otherBase = await octokit.rest.pulls.list({ owner: "acme", repo: "app", base: "dev" });
		expect(otherBase.data).toEqual([]);
	});

	it("updates a PR with PATCH and reports the change on GET", async () => {
		await pr("feature/x");
		const res = await octokit.rest.pulls.update({
			owner: "acme",
			repo: "app",
			pull_number: 1,
			title: "New title",
			body: "New body",
			state: "closed",
		});
		expect(res.status).toBe(200);
		expect(res.data).toMatchObject({ title: "New title", body: "New body", state: "closed" });
		expect(res.data.closed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

		const got = await octokit.rest.pulls.get({ owner: "acme", repo: "app", pull_number: 1 });
		expect(got.data).toMatchObject({ title: "New title", state: "closed", merged: false });
		const closed = await octokit.rest.pulls.list({ owner: "acme", repo: "app", state: "closed" });
		expect(closed.data.map((p) => p.number)).toEqual([1]);

		const badBase = await rejection(
			octokit.rest.pulls.update({ owner: "acme", repo: "app", pull_number: 1, base: "nope" }),
		);
		expect(badBase.status).toBe(422);
	});

	it("tracks pushes to the head branch and merges via mergePull", async () => {
		await git(work, "checkout", "-q", "-b", "feature/push", "main");
		await commit(work, "push.txt", "1\n");
		await git(work, "push", "-q", "origin", "feature/push");
		await pr("feature/push");
		const second = await commit(work, "push.txt", "2\n");
		await git(work, "push", "-q", "origin", "feature/push");

		const got = await octokit.rest.pulls.get({ owner: "acme", repo: "app", pull_number: 1 });
		expect(got.data.head.sha).toBe(second);
		expect(got.data.commits).toBe(2);

		const merged = await double.mergePull(REPO, 1, { mergedBy: "octocat" });
		expect(merged).toMatchObject({
			state: "closed",
			merged: true,
			merged_by: { login: "octocat" },
			head: { sha: second },
		});
		expect(merged.merged_at).toBe(merged.closed_at);
		const issue = await octokit.rest.issues.get({ owner: "acme", repo: "app", issue_number: 1 });
		expect(issue.data.pull_request?.merged_at).toBe(merged.merged_at);
		expect(issue.data.html_url).toBe("https://github.com/acme/app/pull/1");
		const reopen = await rejection(
			octokit.rest.pulls.update({ owner: "acme", repo: "app", pull_number: 1, state: "open" }),
		);
		expect(reopen.status).toBe(422);
	});
});

describe("GitHub double: issues, comments and labels", () => {
	it("comments on an issue (201) and lists the comments", async () => {
		const seeded = double.addIssue(REPO, { title: "Bug", body: "broken", user: "alice" });
		expect(seeded).toMatchObject({ number: 1, user: { login: "alice" }, state: "open" });

		const res = await octokit.rest.issues.createComment({
			owner: "acme",
			repo: "app",
			issue_number: 1,
			body: "On it",
		});
		expect(res.status).toBe(201);
		expect(res.data).toMatchObject({
			body: "On it",
			user: { login: "lisa-bot", type: "User" },
			html_url: `https://github.com/acme/app/issues/1#issuecomment-${res.data.id}`,
		});
		const list = await octokit.rest.issues.listComments({
			owner: "acme",
			repo: "app",
			issue_number: 1,
		});
		expect(list.data.map((c) => c.body)).toEqual(["On it"]);
		expect(double.comments(REPO, 1).map((c) => c.id)).toEqual([res.data.id]);
		const issue = await octokit.rest.issues.get({ owner: "acme", repo: "app", issue_number: 1 });
		expect(issue.data.comments).toBe(1);

		const missing = await rejection(
			octokit.rest.issues.createComment({ owner: "acme", repo: "app", issue_number: 9, body: "x" }),
		);
		expect(missing.status).toBe(404);
	});

	it("adds and removes labels, 404 'Label does not exist' for a missing one", async () => {
		double.addIssue(REPO, { title: "A", labels: ["lisa"] });
		double.addIssue(REPO, { title: "B" });
		const added = await octokit.rest.issues.addLabels({
			owner: "acme",
			repo: "app",
			issue_number: 2,
			labels: ["lisa", "lisa:in progress"],
		});
		expect(added.data.map((l) => l.name)).toEqual(["lisa", "lisa:in progress"]);

		const tagged = await octokit.rest.issues.listForRepo({
			owner: "acme",
			repo: "app",
			labels: "lisa,lisa:in progress",
		});
		expect(tagged.data.map((i) => i.number)).toEqual([2]);

		const removed = await octokit.rest.issues.removeLabel({
			owner: "acme",
			repo: "app",
			issue_number: 2,
			name: "lisa:in progress",
		});
		expect(removed.data.map((l) => l.name)).toEqual(["lisa"]);

		const err = await rejection(
			octokit.rest.issues.removeLabel({
				owner: "acme",
				repo: "app",
				issue_number: 2,
				name: "lisa:in progress",
			}),
		);
		expect(err.status).toBe(404);
		expect(err.response?.data).toMatchObject({ message: "Label does not exist" });

		const repoLabels = await octokit.rest.issues.listLabelsForRepo({ owner: "acme", repo: "app" });
		expect(repoLabels.data.map((l) => l.name).sort()).toEqual(["lisa", "lisa:in progress"]);
		const created = await octokit.rest.issues.createLabel({
			owner: "acme",
			repo: "app",
			name: "lisa:done",
			color: "00ff00",
		});
		expect(created.status).toBe(201);
		expect(created.data).toMatchObject({ name: "lisa:done", color: "00ff00" });
		const dup = await rejection(
			octokit.rest.issues.createLabel({ owner: "acme", repo: "app", name: "LISA:done" }),
		);
		expect(dup.status).toBe(422);
	});

	it("creates, filters, patches and paginates issues", async () => {
		for (let i = 1; i <= 5; i++) double.addIssue(REPO, { title: `Issue ${i}`, labels: ["lisa"] });
		const created = await octokit.rest.issues.create({
			owner: "acme",
			repo: "app",
			title: "Seeded over the wire",
			labels: ["other"],
		});
		expect(created.status).toBe(201);
		expect(created.data.number).toBe(6);

		const patched = await octokit.rest.issues.update({
			owner: "acme",
			repo: "app",
			issue_number: 3,
			state: "closed",
			labels: ["lisa", "lisa:done"],
			title: "Issue three",
		});
		expect(patched.data).toMatchObject({ state: "closed", state_reason: "completed" });
		expect(patched.data.labels.map((l) => (typeof l === "string" ? l : l.name))).toEqual([
			"lisa",
			"lisa:done",
		]);

		const open = await octokit.paginate(octokit.rest.issues.listForRepo, {
			owner: "acme",
			repo: "app",
			labels: "lisa",
			state: "open",
			sort: "created",
			direction: "asc",
			per_page: 2,
		});
		expect(open.map((i) => i.number)).toEqual([1, 2, 4, 5]);
		const pages = double.requests.filter(
			(r) => r.method === "GET" && r.path === "/repos/acme/app/issues",
		);
		expect(pages.map((r) => r.query.page ?? "1")).toEqual(["1", "2"]);
		expect(double.issues(REPO).find((i) => i.number === 3)?.title).toBe("Issue three");
	});

	it("shares the number space between issues and PRs", async () => {
		double.addIssue(REPO, { title: "Tracker issue" });
		const created = await pr("feature/z");
		expect(created.data.number).toBe(2);
		const issues = await octokit.rest.issues.listForRepo({ owner: "acme", repo: "app" });
		expect(issues.data.map((i) => [i.number, i.pull_request !== undefined])).toEqual([
			[2, true],
			[1, false],
		]);
		const notPull = await rejection(
			octokit.rest.pulls.get({ owner: "acme", repo: "app", pull_number: 1 }),
		);
		expect(notPull.status).toBe(404);
	});
});

describe("GitHub double: sub-issues, dependencies and comment edits", () => {
	const at = (issue_number: number) => ({ owner: "acme", repo: "app", issue_number });

	it("adds sub-issues by id (not number), one parent each, and records blocked-by once", async () => {
		const epic = double.addIssue(REPO, { title: "Epic" });
		const a = double.addIssue(REPO, { title: "A" });
		const b = double.addIssue(REPO, { title: "B" });
		const added = await octokit.rest.issues.addSubIssue({ ...at(epic.number), sub_issue_id: a.id });
		expect(added.status).toBe(201);
		// A number is not an id.
		const byNumber = await rejection(
			octokit.rest.issues.addSubIssue({ ...at(epic.number), sub_issue_id: b.number }),
		);
		expect(byNumber.status).toBe(422);
		// One parent: a second needs replace_parent, which moves it.
		const again = await rejection(
			octokit.rest.issues.addSubIssue({ ...at(b.number), sub_issue_id: a.id }),
		);
		expect(again.status).toBe(422);
		await octokit.rest.issues.addSubIssue({
			...at(b.number),
			sub_issue_id: a.id,
			replace_parent: true,
		});
		expect(double.subIssues(REPO, epic.number)).toEqual([]);
		const listed = await octokit.rest.issues.listSubIssues(at(b.number));
		expect(listed.data.map((i) => i.number)).toEqual([a.number]);

		await octokit.rest.issues.addBlockedByDependency({ ...at(b.number), issue_id: a.id });
		const twice = await rejection(
			octokit.rest.issues.addBlockedByDependency({ ...at(b.number), issue_id: a.id }),
		);
		expect(twice.status).toBe(422);
		const self = await rejection(
			octokit.rest.issues.addBlockedByDependency({ ...at(b.number), issue_id: b.id }),
		);
		expect(self.status).toBe(422);
		const blockers = await octokit.rest.issues.listDependenciesBlockedBy(at(b.number));
		expect(blockers.data.map((i) => i.number)).toEqual([a.number]);
		expect(double.blockedBy(REPO, b.number).map((i) => i.number)).toEqual([a.number]);
	});

	it("answers 404 for sub-issues and dependencies where the server has none", async () => {
		const epic = double.addIssue(REPO, { title: "Epic" });
		const a = double.addIssue(REPO, { title: "A" });
		double.setFeatures({ subIssues: false, dependencies: false });
		for (const call of [
			octokit.rest.issues.listSubIssues(at(epic.number)),
			octokit.rest.issues.addSubIssue({ ...at(epic.number), sub_issue_id: a.id }),
			octokit.rest.issues.listDependenciesBlockedBy(at(a.number)),
			octokit.rest.issues.addBlockedByDependency({ ...at(a.number), issue_id: epic.id }),
		])
			expect((await rejection(call)).status).toBe(404);
		expect(double.subIssues(REPO, epic.number)).toEqual([]);
	});

	it("edits a comment in place by its id, 404 for an unknown one", async () => {
		double.addIssue(REPO, { title: "Epic" });
		const { data } = await octokit.rest.issues.createComment({ ...at(1), body: "Planning" });
		const edited = await octokit.rest.issues.updateComment({
			owner: "acme",
			repo: "app",
			comment_id: data.id,
			body: "2 of 3 done",
		});
		expect(edited.data).toMatchObject({ id: data.id, body: "2 of 3 done" });
		expect(double.comments(REPO, 1).map((c) => c.body)).toEqual(["2 of 3 done"]);
		const missing = await rejection(
			octokit.rest.issues.updateComment({ owner: "acme", repo: "app", comment_id: 1, body: "x" }),
		);
		expect(missing.status).toBe(404);
	});
});

describe("GitHub double: checks and Actions", () => {
	const FAILING_LOG =
		"2024-05-01T10:00:00.0000000Z Run npm test\n2024-05-01T10:00:01.0000000Z FAIL src/a.test.ts\n";

	const seed = () =>
		double.setChecks(REPO, sha["feature/x"] as string, [
			{
				name: "test",
				conclusion: "failure",
				output: { title: "1 test failed", summary: "src/a.test.ts", text: "expected 1 to be 2" },
				annotations: [
					{ path: "src/a.test.ts", start_line: 3, message: "expected 1 to be 2", title: "a fails" },
					{
						path: ".github",
						start_line: 1,
						annotation_level: "warning",
						message: "Node 16 is deprecated",
					},
				],
				log: FAILING_LOG,
			},
			{ name: "lint" },
			{ name: "deploy", app: "vercel", status: "in_progress" },
		]);

	it("lists a commit's check suites and runs, by SHA or branch, in GitHub's shapes", async () => {
		const seeded = seed();
		const actionsSuite = seeded.suites.find((s) => s.app.slug === "github-actions");
		const suites = await octokit.rest.checks.listSuitesForRef({
			owner: "acme",
			repo: "app",
			ref: "feature/x",
		});
		expect(suites.data.total_count).toBe(2);
		expect(suites.data.check_suites).toEqual([
			expect.objectContaining({
				id: actionsSuite?.id,
				head_sha: sha["feature/x"],
				head_branch: "feature/x",
				status: "completed",
				conclusion: "failure",
				latest_check_runs_count: 2,
				app: expect.objectContaining({ slug: "github-actions", id: 15368 }),
			}),
			expect.objectContaining({
				status: "in_progress",
				conclusion: null,
				app: expect.objectContaining({ slug: "vercel" }),
			}),
		]);

		const runs = await octokit.rest.checks.listForRef({
			owner: "acme",
			repo: "app",
			ref: sha["feature/x"] as string,
		});
		expect(runs.data.total_count).toBe(3);
		expect(runs.data.check_runs).toEqual(seeded.runs);
		expect(suites.data.check_suites).toEqual(seeded.suites);
		const test = runs.data.check_runs[0];
		expect(test).toMatchObject({
			name: "test",
			head_sha: sha["feature/x"],
			status: "completed",
			conclusion: "failure",
			output: {
				title: "1 test failed",
				summary: "src/a.test.ts",
				text: "expected 1 to be 2",
				annotations_count: 2,
			},
			check_suite: { id: actionsSuite?.id },
			app: { slug: "github-actions" },
		});
		const workflowRun = (
			await octokit.rest.actions.getJobForWorkflowRun({
				owner: "acme",
				repo: "app",
				job_id: test?.id as number,
			})
		).data.run_id;
		expect(test?.html_url).toBe(
			`https://github.com/acme/app/actions/runs/${workflowRun}/job/${test?.id}`,
		);
		expect(test?.details_url).toBe(test?.html_url);
		expect(runs.data.check_runs[2]).toMatchObject({
			name: "deploy",
			status: "in_progress",
			conclusion: null,
			completed_at: null,
			app: { slug: "vercel" },
			html_url: expect.stringMatching(/^https:\/\/github\.com\/acme\/app\/runs\/\d+$/),
		});

		const paged = await octokit.paginate(octokit.rest.checks.listForRef, {
			owner: "acme",
			repo: "app",
			ref: "feature/x",
			per_page: 2,
		});
		expect(paged.map((r) => r.name)).toEqual(["test", "lint", "deploy"]);
		const named = await octokit.rest.checks.listForRef({
			owner: "acme",
			repo: "app",
			ref: "feature/x",
			check_name: "lint",
		});
		expect(named.data.check_runs.map((r) => r.name)).toEqual(["lint"]);

		// A commit without checks has none; a ref that names no commit is a 422.
		const none = await octokit.rest.checks.listForRef({ owner: "acme", repo: "app", ref: "main" });
		expect(none.data).toEqual({ total_count: 0, check_runs: [] });
		const unknown = await rejection(
			octokit.rest.checks.listSuitesForRef({ owner: "acme", repo: "app", ref: "f".repeat(40) }),
		);
		expect(unknown.status).toBe(422);
		expect(unknown.response?.data).toMatchObject({
			message: `No commit found for SHA: ${"f".repeat(40)}`,
		});
	});

	it("serves a run's annotations, and 404s for unknown runs and suites", async () => {
		const { runs } = seed();
		const test = runs[0];
		const annotations = await octokit.rest.checks.listAnnotations({
			owner: "acme",
			repo: "app",
			check_run_id: test?.id as number,
		});
		expect(annotations.data).toEqual([
			{
				path: "src/a.test.ts",
				blob_href: `https://github.com/acme/app/blob/${sha["feature/x"]}/src/a.test.ts`,
				start_line: 3,
				end_line: 3,
				start_column: null,
				end_column: null,
				annotation_level: "failure",
				title: "a fails",
				message: "expected 1 to be 2",
				raw_details: null,
			},
			expect.objectContaining({ annotation_level: "warning", title: null }),
		]);
		const run = await octokit.rest.checks.get({
			owner: "acme",
			repo: "app",
			check_run_id: test?.id as number,
		});
		expect(run.data.name).toBe("test");
		const suite = await octokit.rest.checks.getSuite({
			owner: "acme",
			repo: "app",
			check_suite_id: test?.check_suite?.id as number,
		});
		expect(suite.data.conclusion).toBe("failure");

		for (const call of [
			octokit.rest.checks.listAnnotations({ owner: "acme", repo: "app", check_run_id: 1 }),
			octokit.rest.checks.get({ owner: "acme", repo: "app", check_run_id: 1 }),
			octokit.rest.checks.getSuite({ owner: "acme", repo: "app", check_suite_id: 1 }),
			octokit.rest.actions.getWorkflowRun({ owner: "acme", repo: "app", run_id: 1 }),
			octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner: "acme", repo: "app", job_id: 1 }),
		])
			expect((await rejection(call)).status).toBe(404);
		expect(double.unhandled).toEqual([]);
	});

	it("has an Actions workflow run and job per github-actions suite and run", async () => {
		const { runs, suites } = seed();
		const test = runs[0] as (typeof runs)[number];
		const job = await octokit.rest.actions.getJobForWorkflowRun({
			owner: "acme",
			repo: "app",
			job_id: test.id,
		});
		expect(job.data).toMatchObject({
			id: test.id,
			name: "test",
			head_sha: sha["feature/x"],
			status: "completed",
			conclusion: "failure",
			html_url: test.html_url,
			workflow_name: "CI",
		});
		const workflowRun = await octokit.rest.actions.getWorkflowRun({
			owner: "acme",
			repo: "app",
			run_id: job.data.run_id,
		});
		expect(workflowRun.data).toMatchObject({
			id: job.data.run_id,
			name: "CI",
			check_suite_id: suites[0]?.id,
			head_sha: sha["feature/x"],
			status: "completed",
			conclusion: "failure",
		});
		const jobs = await octokit.rest.actions.listJobsForWorkflowRun({
			owner: "acme",
			repo: "app",
			run_id: job.data.run_id,
		});
		expect(jobs.data.total_count).toBe(2);
		expect(jobs.data.jobs.map((j) => [j.name, j.run_id, j.status, j.conclusion])).toEqual([
			["test", job.data.run_id, "completed", "failure"],
			["lint", job.data.run_id, "completed", "success"],
		]);
		// Another app's run is no Actions job.
		const deploy = runs[2] as (typeof runs)[number];
		expect(
			(
				await rejection(
					octokit.rest.actions.getJobForWorkflowRun({
						owner: "acme",
						repo: "app",
						job_id: deploy.id,
					}),
				)
			).status,
		).toBe(404);
	});

	it("redirects a job's log to a signed URL that octokit follows, without the token", async () => {
		const { runs } = seed();
		const [test, lint] = runs;
		const log = await octokit.rest.actions.downloadJobLogsForWorkflowRun({
			owner: "acme",
			repo: "app",
			job_id: test?.id as number,
		});
		expect(log.status).toBe(200);
		expect(log.data).toBe(FAILING_LOG);
		expect(log.url).toMatch(
			new RegExp(
				`^${double.url}/_blobs/actions-results/\\d+/jobs/${test?.id}/logs\\.txt\\?sig=[0-9a-f]{64}$`,
			),
		);
		const [redirect, blob] = double.requests.slice(-2);
		expect(redirect).toMatchObject({
			path: `/repos/acme/app/actions/jobs/${test?.id}/logs`,
			status: 302,
		});
		expect(blob).toMatchObject({ method: "GET", status: 200 });
		expect(blob?.path).toMatch(/^\/_blobs\//);

		// The blob needs its signature, not a token; a job without a log (expired) is a 404.
		const tampered = await fetch(log.url.replace(/sig=./, "sig=x"));
		expect(tampered.status).toBe(403);
		const direct = await fetch(log.url);
		expect(await direct.text()).toBe(FAILING_LOG);
		expect(direct.headers.get("content-type")).toMatch(/^text\/plain/);
		const expired = await rejection(
			octokit.rest.actions.downloadJobLogsForWorkflowRun({
				owner: "acme",
				repo: "app",
				job_id: lint?.id as number,
			}),
		);
		expect(expired.status).toBe(404);
	});

	it("keeps a check's id as it progresses, and shows an app's queued suite with no run", async () => {
		const ref = sha["feature/x"] as string;
		const first = double.setChecks(REPO, ref, [{ name: "test", status: "in_progress" }], {
			queuedSuites: ["circleci"],
		});
		expect(first.suites.map((s) => [s.app.slug, s.status, s.latest_check_runs_count])).toEqual([
			["github-actions", "in_progress", 1],
			["circleci", "queued", 0],
		]);
		const second = double.setChecks(REPO, ref, [{ name: "test", conclusion: "timed_out" }]);
		expect(second.runs[0]).toMatchObject({
			id: first.runs[0]?.id,
			status: "completed",
			conclusion: "timed_out",
		});
		expect(second.suites.map((s) => [s.id, s.conclusion])).toEqual([
			[first.suites[0]?.id, "timed_out"],
		]);
		const runs = await octokit.rest.checks.listForRef({
			owner: "acme",
			repo: "app",
			ref,
			status: "completed",
		});
		expect(runs.data.check_runs.map((r) => r.id)).toEqual([first.runs[0]?.id]);
	});
});

describe("GitHub double: reviews, replies, reviewers and author associations", () => {
	const NUMBER = 1;
	beforeEach(async () => {
		await pr("feature/x");
	});

	it("adds a review with inline comments whose diff_hunk comes from the pull request's diff", async () => {
		double.addCollaborator(REPO, "alice");
		const { review, comments } = double.addReview(REPO, NUMBER, {
			user: "alice",
			state: "CHANGES_REQUESTED",
			body: "Please fix",
			comments: [{ path: "feature-x.txt", line: 1, body: "typo here" }],
		});
		expect(review).toMatchObject({
			user: { login: "alice" },
			state: "CHANGES_REQUESTED",
			body: "Please fix",
			author_association: "COLLABORATOR",
			commit_id: sha["feature/x"],
			html_url: `https://github.com/acme/app/pull/1#pullrequestreview-${review.id}`,
		});
		expect(review.submitted_at).toMatch(/Z$/);
		expect(comments).toEqual([
			expect.objectContaining({
				pull_request_review_id: review.id,
				path: "feature-x.txt",
				line: 1,
				original_line: 1,
				side: "RIGHT",
				diff_hunk: "@@ -0,0 +1 @@\n+feature/x",
				body: "typo here",
				user: expect.objectContaining({ login: "alice" }),
				author_association: "COLLABORATOR",
				html_url: `https://github.com/acme/app/pull/1#discussion_r${comments[0]?.id}`,
			}),
		]);
		expect(comments[0]).not.toHaveProperty("in_reply_to_id");

		const listed = await octokit.rest.pulls.listReviews({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
		});
		expect(listed.data).toEqual([review]);
		const got = await octokit.rest.pulls.getReview({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
			review_id: review.id,
		});
		expect(got.data).toEqual(review);
		const ofReview = await octokit.rest.pulls.listCommentsForReview({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
			review_id: review.id,
		});
		expect(ofReview.data).toEqual(comments);
		const all = await octokit.rest.pulls.listReviewComments({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
		});
		expect(all.data).toEqual(comments);
		const one = await octokit.rest.pulls.getReviewComment({
			owner: "acme",
			repo: "app",
			comment_id: comments[0]?.id as number,
		});
		expect(one.data).toEqual(comments[0]);

		for (const call of [
			octokit.rest.pulls.getReview({
				owner: "acme",
				repo: "app",
				pull_number: NUMBER,
				review_id: 1,
			}),
			octokit.rest.pulls.listCommentsForReview({
				owner: "acme",
				repo: "app",
				pull_number: NUMBER,
				review_id: 1,
			}),
			octokit.rest.pulls.listReviews({ owner: "acme", repo: "app", pull_number: 9 }),
			octokit.rest.pulls.getReviewComment({ owner: "acme", repo: "app", comment_id: 1 }),
		])
			expect((await rejection(call)).status).toBe(404);
		expect(double.unhandled).toEqual([]);
	});

	it("replies in a thread: 201, in_reply_to_id the thread's first comment, a review of its own", async () => {
		const { comments } = double.addReview(REPO, NUMBER, {
			user: "acme",
			state: "COMMENTED",
			comments: [{ path: "feature-x.txt", line: 1, body: "why?" }],
		});
		const root = comments[0] as (typeof comments)[number];
		const reply = await octokit.rest.pulls.createReplyForReviewComment({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
			comment_id: root.id,
			body: "Because.",
		});
		expect(reply.status).toBe(201);
		expect(reply.data).toMatchObject({
			in_reply_to_id: root.id,
			path: root.path,
			line: root.line,
			diff_hunk: root.diff_hunk,
			body: "Because.",
			user: { login: "lisa-bot" },
			author_association: "NONE",
		});
		expect(reply.data.pull_request_review_id).not.toBe(root.pull_request_review_id);
		// A reply to the reply still hangs from the thread's first comment.
		const { comments: nested } = double.addReview(REPO, NUMBER, {
			user: "acme",
			state: "COMMENTED",
			comments: [{ in_reply_to: reply.data.id, body: "ok" }],
		});
		expect(nested[0]?.in_reply_to_id).toBe(root.id);
		expect(double.reviewComments(REPO, NUMBER).map((c) => c.body)).toEqual([
			"why?",
			"Because.",
			"ok",
		]);
		expect(double.reviews(REPO, NUMBER).map((r) => [r.user.login, r.state])).toEqual([
			["acme", "COMMENTED"],
			["lisa-bot", "COMMENTED"],
			["acme", "COMMENTED"],
		]);

		const missing = await rejection(
			octokit.rest.pulls.createReplyForReviewComment({
				owner: "acme",
				repo: "app",
				pull_number: NUMBER,
				comment_id: 1,
				body: "x",
			}),
		);
		expect(missing.status).toBe(404);
	});

	it("submits a review over the wire, refusing to approve one's own pull request", async () => {
		const own = await rejection(
			octokit.rest.pulls.createReview({
				owner: "acme",
				repo: "app",
				pull_number: NUMBER,
				event: "APPROVE",
			}),
		);
		expect(own.status).toBe(422);
		expect(own.message).toContain("Can not approve your own pull request");
		const created = await octokit.rest.pulls.createReview({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
			event: "COMMENT",
			body: "notes",
			comments: [{ path: "feature-x.txt", line: 1, body: "note" }],
		});
		expect(created.data).toMatchObject({
			state: "COMMENTED",
			body: "notes",
			user: { login: "lisa-bot" },
		});
		expect(double.reviewComments(REPO, NUMBER)).toEqual([
			expect.objectContaining({ pull_request_review_id: created.data.id, body: "note", line: 1 }),
		]);
	});

	it("requests reviewers among collaborators; a review answers the request", async () => {
		double.addCollaborator(REPO, "alice");
		const res = await octokit.rest.pulls.requestReviewers({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
			reviewers: ["alice", "acme"],
		});
		expect(res.status).toBe(201);
		expect(res.data.requested_reviewers?.map((u) => u.login)).toEqual(["alice", "acme"]);
		const listed = await octokit.rest.pulls.listRequestedReviewers({
			owner: "acme",
			repo: "app",
			pull_number: NUMBER,
		});
		expect(listed.data).toEqual({ users: res.data.requested_reviewers, teams: [] });

		const stranger = await rejection(
			octokit.rest.pulls.requestReviewers({
				owner: "acme",
				repo: "app",
				pull_number: NUMBER,
				reviewers: ["mallory"],
			}),
		);
		expect(stranger.status).toBe(422);
		expect(stranger.message).toContain("Reviews may only be requested from collaborators");
		const author = await rejection(
			octokit.rest.pulls.requestReviewers({
				owner: "acme",
				repo: "app",
				pull_number: NUMBER,
				reviewers: ["lisa-bot"],
			}),
		);
		expect(author.status).toBe(422);

		double.addReview(REPO, NUMBER, { user: "alice", state: "APPROVED" });
		const pull = await octokit.rest.pulls.get({ owner: "acme", repo: "app", pull_number: NUMBER });
		expect(pull.data.requested_reviewers?.map((u) => u.login)).toEqual(["acme"]);
	});

	it("sets author_association from the repository's owner, members and collaborators", async () => {
		double.addCollaborator(REPO, "Carol", "MEMBER");
		double.addCollaborator(REPO, "dave");
		const by = (user: string) =>
			double.addComment(REPO, NUMBER, { user, body: `@lisa-bot from ${user}` });
		expect(
			[by("acme"), by("carol"), by("dave"), by("mallory")].map((c) => c.author_association),
		).toEqual(["OWNER", "MEMBER", "COLLABORATOR", "NONE"]);
		// Issue comments work on a pull request's number, over the wire too.
		const posted = await octokit.rest.issues.createComment({
			owner: "acme",
			repo: "app",
			issue_number: NUMBER,
			body: "Round done",
		});
		expect(posted.data).toMatchObject({
			html_url: `https://github.com/acme/app/pull/1#issuecomment-${posted.data.id}`,
			author_association: "NONE",
		});
		const listed = await octokit.rest.issues.listComments({
			owner: "acme",
			repo: "app",
			issue_number: NUMBER,
		});
		expect(listed.data.map((c) => [c.user?.login, c.author_association])).toEqual([
			["acme", "OWNER"],
			["carol", "MEMBER"],
			["dave", "COLLABORATOR"],
			["mallory", "NONE"],
			["lisa-bot", "NONE"],
		]);
		const review = double.addReview(REPO, NUMBER, {
			user: "mallory",
			state: "COMMENTED",
			body: "hi",
		});
		expect(review.review.author_association).toBe("NONE");
		const collaborator = await octokit.rest.repos.checkCollaborator({
			owner: "acme",
			repo: "app",
			username: "dave",
		});
		expect(collaborator.status).toBe(204);
		expect(
			(
				await rejection(
					octokit.rest.repos.checkCollaborator({ owner: "acme", repo: "app", username: "mallory" }),
				)
			).status,
		).toBe(404);
	});
});

describe("GitHub double: faults, retries and throttling with octokit defaults", () => {
	it("a 502 from failNext is retried transparently by the retry plugin", async () => {
		const client = new Octokit({ auth: double.token, baseUrl: double.url });
		double.failNext(1, { status: 502 });
		const res = await client.rest.users.getAuthenticated();
		expect(res.data.login).toBe("lisa-bot");
		expect(double.requests.map((r) => r.status)).toEqual([502, 200]);
	});

	it("a 403 secondary rate limit with retry-after is retried by the throttling plugin", async () => {
		const warnings: string[] = [];
		const log = { ...quiet, warn: (m: string) => warnings.push(m) };
		const client = new Octokit({ auth: double.token, baseUrl: double.url, log });
		double.failNext(1, {
			status: 403,
			body: {
				message: "You have exceeded a secondary rate limit. Please wait a few minutes.",
				documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
			},
			headers: { "retry-after": "1" },
		});
		double.addIssue(REPO, { title: "Bug" });
		const res = await client.rest.issues.createComment({
			owner: "acme",
			repo: "app",
			issue_number: 1,
			body: "hi",
		});
		expect(res.status).toBe(201);
		expect(double.requests.map((r) => r.status)).toEqual([403, 201]);
		expect(warnings.join("\n")).toMatch(/SecondaryRateLimit detected/);
		expect(double.comments(REPO, 1)).toHaveLength(1);
	});

	it("a 403 with x-ratelimit-remaining 0 is retried after x-ratelimit-reset", async () => {
		const client = new Octokit({ auth: double.token, baseUrl: double.url, log: quiet });
		double.failNext(1, {
			status: 403,
			body: { message: "API rate limit exceeded for user ID 1." },
			headers: {
				"x-ratelimit-remaining": "0",
				"x-ratelimit-reset": `${Math.floor(Date.now() / 1000)}`,
			},
		});
		const res = await client.rest.issues.listForRepo({ owner: "acme", repo: "app" });
		expect(res.status).toBe(200);
		expect(double.requests.map((r) => r.status)).toEqual([403, 200]);
	});

	it("a retried write that took effect surfaces as 422 'already exists'", async () => {
		const client = new Octokit({
			auth: double.token,
			baseUrl: double.url,
			throttle: { enabled: false },
			retry: { retryAfterBaseValue: 10 },
		});
		double.failNext(1, { status: 502, afterHandling: true });
		const err = await rejection(
			client.rest.pulls.create({
				owner: "acme",
				repo: "app",
				head: "feature/x",
				base: "main",
				title: "t",
			}),
		);
		expect(err.status).toBe(422);
		expect(err.message).toContain("A pull request already exists for acme:feature/x.");
		expect(double.requests.map((r) => r.status)).toEqual([502, 422]);
		expect(double.pulls(REPO)).toHaveLength(1);
	});

	it("full-default octokit creates a PR and lists it", async () => {
		const client = new Octokit({ auth: double.token, baseUrl: double.url });
		const created = await client.rest.pulls.create({
			owner: "acme",
			repo: "app",
			head: "feature/x",
			base: "main",
			title: "t",
		});
		const listed = await client.paginate(client.rest.pulls.list, {
			owner: "acme",
			repo: "app",
			head: "acme:feature/x",
		});
		expect(listed.map((p) => p.id)).toEqual([created.data.id]);
	});
});

describe("signGitHub", () => {
	it("produces an X-Hub-Signature-256 value that @octokit/webhooks verifies", async () => {
		const body = JSON.stringify({ action: "closed", number: 1 });
		const signature = signGitHub(body, "s3cret");
		expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
		const webhooks = new Webhooks({ secret: "s3cret" });
		expect(await webhooks.verify(body, signature)).toBe(true);
		expect(await new Webhooks({ secret: "other" }).verify(body, signature)).toBe(false);
		expect(signGitHub(Buffer.from(body), "s3cret")).toBe(signature);
	});
});
