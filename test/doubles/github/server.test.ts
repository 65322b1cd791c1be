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
