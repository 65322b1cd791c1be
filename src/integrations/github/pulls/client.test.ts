import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Octokit } from "octokit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type GitHubDouble, startGitHubDouble } from "../../../../test/doubles/github/server";
import { bareRepo, git } from "../../../../test/support/git";
import { MAX_FOLLOW_UP_TEXT } from "../../../domain/follow-up";
import { TrackerError } from "../../tracker";
import {
	followUpsOf,
	gitHubFollowUps,
	LOG_TAIL_BYTES,
	LOG_TAIL_LINES,
	logTail,
	MAX_FAILURES,
} from "./client";
import type { PullRequestFollowUps } from "./follow-up";

const REPO = "acme/api";
const BRANCH = "lisa/fix-it";
const ESC = "\u001b";
const LONG = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");

let dir: string;
let bare: string;
let headSha: string;
let github: GitHubDouble;
/** Lisa's own client: octokit with retries and throttling. */
let lisa: PullRequestFollowUps;
/** Real octokit without waits: quick retries, writes not spaced out (the plugin's limiter is per process). */
let quick: PullRequestFollowUps;
let prUrl: string;

beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-gh-pulls-"));
	const repo = await bareRepo(dir, "api", "main", { "src/long.ts": `${LONG}\n` });
	bare = repo.path;
	const seed = path.join(dir, "api-seed");
	await git(seed, "checkout", "-b", BRANCH);
	// Thirty changed lines make one long hunk: a comment at its end has a long diff_hunk.
	const changed = LONG.split("\n").map((l, i) => (i < 30 ? `${l} changed` : l));
	await writeFile(path.join(seed, "src/long.ts"), `${changed.join("\n")}\n`);
	await writeFile(path.join(seed, "src/new.ts"), "export const x = 1;\n");
	await git(seed, "add", "-A");
	await git(seed, "commit", "-m", "fix: it");
	await git(seed, "push", "origin", BRANCH);
	headSha = await git(seed, "rev-parse", "HEAD");
});

afterAll(async () => {
	await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
	github = await startGitHubDouble({ repos: { [REPO]: bare } });
	lisa = gitHubFollowUps(github.token, github.url);
	const octokit = new Octokit({
		auth: github.token,
		baseUrl: github.url,
		throttle: { enabled: false },
		retry: { retryAfterBaseValue: 1 },
	});
	quick = followUpsOf(octokit);
	const { data } = await octokit.rest.pulls.create({
		owner: "acme",
		repo: "api",
		head: BRANCH,
		base: "main",
		title: "Fix it",
	});
	prUrl = data.html_url;
});

afterEach(async () => {
	await github.stop();
});

const failed = (promise: Promise<unknown>) =>
	promise.then(
		() => undefined,
		(e: unknown) => e,
	);

describe("the pull request's state", () => {
	it("reads number, slug, open, merged, head SHA and branch", async () => {
		expect(await lisa.state(prUrl)).toEqual({
			number: 1,
			slug: REPO,
			open: true,
			merged: false,
			headSha,
			branch: BRANCH,
		});
		await github.mergePull(REPO, 1);
		expect(await lisa.state(prUrl)).toMatchObject({ open: false, merged: true });
	});

	it("retries a 502 on its own, fails transiently on 5xx that lasts, permanently on 404", async () => {
		github.failNext(1, { status: 502 });
		expect((await lisa.state(prUrl)).number).toBe(1);
		expect(github.requests.map((r) => r.status)).toEqual([201, 502, 200]);

		github.failNext(4, { status: 500 });
		const lasting = await failed(quick.state(prUrl));
		expect(lasting).toBeInstanceOf(TrackerError);
		expect(lasting).toMatchObject({ transient: true });
		expect((lasting as Error).message).toMatch(/^GitHub: reading .*\/pull\/1 failed/);

		const missing = await failed(lisa.state("https://github.com/acme/api/pull/99"));
		expect(missing).toBeInstanceOf(TrackerError);
		expect(missing).toMatchObject({ transient: false });
		const elsewhere = await failed(lisa.state("https://github.com/acme/nope/pull/1"));
		expect(elsewhere).toMatchObject({ transient: false });
	});

	it("refuses a URL that is no pull request, without asking GitHub", async () => {
		const before = github.requests.length;
		for (const url of ["https://github.com/acme/api/issues/1", "acme/api#1", ""]) {
			const err = await failed(lisa.state(url));
			expect(err).toBeInstanceOf(TrackerError);
			expect(err).toMatchObject({ transient: false });
		}
		expect(await failed(lisa.comment("nope", "x"))).toMatchObject({ transient: false });
		expect(github.requests.length).toBe(before);
	});
});

describe("a commit's checks", () => {
	const cleanup = Array.from({ length: 8 }, (_, i) => `Post job cleanup ${i}`);
	const log = [
		"\uFEFF2024-05-01T10:00:00.1234567Z ##[group]Run npm test",
		"2024-05-01T10:00:00.2000000Z npm test",
		"2024-05-01T10:00:01.0000000Z ##[endgroup]",
		`2024-05-01T10:00:02.0000000Z ${ESC}[31mFAIL${ESC}[39m src/a.test.ts`,
		`2024-05-01T10:00:02.1000000Z   ${ESC}]8;;https://x.test${ESC}\\link${ESC}]8;;${ESC}\\ expected 1 to be 2`,
		"2024-05-01T10:00:03.0000000Z ##[error]Process completed with exit code 1.",
		...cleanup.map((l) => `2024-05-01T10:00:04.0000000Z ${l}`),
	].join("\n");

	it("reports failing checks with output, failure annotations and the log up to its last error", async () => {
		github.setChecks(REPO, headSha, [
			{
				name: "test",
				conclusion: "failure",
				output: {
					title: `${ESC}[1m1 test failed${ESC}[22m`,
					summary: "src/a.test.ts",
					text: "x".repeat(MAX_FOLLOW_UP_TEXT * 2),
				},
				annotations: [
					{ path: ".github", start_line: 1, message: "Process completed with exit code 1." },
					{
						path: "src/a.test.ts",
						start_line: 3,
						message: `expected ${ESC}[32m1${ESC}[39m to be 2`,
					},
					{ path: "src/a.ts", start_line: 1, message: "deprecated", annotation_level: "warning" },
					{ path: "src/b.ts", start_line: 9, message: "y".repeat(5000), title: "b breaks" },
				],
				log,
			},
			{ name: "lint" },
			{ name: "docs", conclusion: "cancelled" },
			{ name: "e2e", conclusion: "timed_out" },
			{
				name: "build",
				app: "circleci",
				conclusion: "startup_failure",
				details_url: "https://ci.test/1",
			},
		]);
		const { complete, failures } = await lisa.checks(prUrl, headSha);
		expect(complete).toBe(true);
		expect(failures.map((f) => [f.name, f.conclusion])).toEqual([
			["test", "failure"],
			["e2e", "timed_out"],
			["build", "startup_failure"],
		]);
		const [test, e2e, build] = failures;
		expect(test?.url).toMatch(/^https:\/\/github\.com\/acme\/api\/actions\/runs\/\d+\/job\/\d+$/);
		expect(test?.summary?.startsWith("1 test failed\n\nsrc/a.test.ts\n\nxxx")).toBe(true);
		expect(test?.summary?.length).toBe(MAX_FOLLOW_UP_TEXT);
		expect(test?.annotations).toEqual([
			{ path: "src/a.test.ts", line: 3, message: "expected 1 to be 2" },
			{ path: "src/b.ts", line: 9, message: expect.stringMatching(/^b breaks: y+…$/) },
		]);
		expect(test?.annotations[1]?.message.length).toBe(1000);
		expect(test?.log).toBe(
			[
				"##[group]Run npm test",
				"npm test",
				"##[endgroup]",
				"FAIL src/a.test.ts",
				"  link expected 1 to be 2",
				"##[error]Process completed with exit code 1.",
			].join("\n"),
		);
		// The Actions job has no log (expired): the failure stands without one.
		expect(e2e).toEqual({
			name: "e2e",
			conclusion: "timed_out",
			url: expect.any(String),
			annotations: [],
		});
		// Another app's check has no Actions job to ask for a log.
		expect(build).toEqual({
			name: "build",
			conclusion: "startup_failure",
			url: expect.stringMatching(/^https:\/\/github\.com\/acme\/api\/runs\/\d+$/),
			annotations: [],
		});
		const logRequests = github.requests.filter((r) => r.path.endsWith("/logs"));
		expect(logRequests.map((r) => r.status)).toEqual([302, 404]);
		expect(github.requests.some((r) => r.path.startsWith("/_blobs/") && r.status === 200)).toBe(
			true,
		);
		expect(github.unhandled).toEqual([]);
	});

	it("is incomplete while a run has not completed, and reads no failure until it is", async () => {
		github.setChecks(REPO, headSha, [
			{ name: "test", status: "in_progress" },
			{ name: "lint", conclusion: "failure" },
		]);
		expect(await lisa.checks(prUrl, headSha)).toEqual({ complete: false, failures: [] });
		// A suite no run was ever created in (an app that never ran) does not hold the round back.
		github.setChecks(REPO, headSha, [{ name: "test", conclusion: "failure" }], {
			queuedSuites: ["circleci"],
		});
		const queued = await lisa.checks(prUrl, headSha);
		expect(queued.complete).toBe(true);
		expect(queued.failures.map((f) => f.name)).toEqual(["test"]);
		github.setChecks(REPO, headSha, []);
		expect(await lisa.checks(prUrl, headSha)).toEqual({ complete: true, failures: [] });
	});

	it("pages through many runs and keeps at most MAX_FAILURES", async () => {
		const passing = Array.from({ length: 101 }, (_, i) => ({ name: `ok ${i}` }));
		const failing = Array.from({ length: MAX_FAILURES + 2 }, (_, i) => ({
			name: `bad ${i}`,
			conclusion: "failure",
			app: "circleci",
		}));
		github.setChecks(REPO, headSha, [...passing, ...failing]);
		const { complete, failures } = await lisa.checks(prUrl, headSha);
		expect(complete).toBe(true);
		expect(failures.map((f) => f.name)).toEqual(
			Array.from({ length: MAX_FAILURES }, (_, i) => `bad ${i}`),
		);
		const pages = github.requests.filter((r) => r.path.endsWith("/check-runs"));
		expect(pages.map((r) => r.query.page ?? "1")).toEqual(["1", "2"]);
	});

	it("fails permanently for a commit GitHub does not know, transiently when GitHub fails", async () => {
		expect(await failed(lisa.checks(prUrl, "0".repeat(40)))).toMatchObject({
			name: "TrackerError",
			transient: false,
		});
		// Suites and runs are asked for together: each is tried four times.
		github.failNext(8, { status: 503 });
		expect(await failed(quick.checks(prUrl, headSha))).toMatchObject({
			name: "TrackerError",
			transient: true,
		});
		await vi.waitFor(() => expect(github.requests.filter((r) => r.status === 503)).toHaveLength(8));
	});
});

describe("job log tails", () => {
	it("keeps the last lines within the line and byte budgets, without ANSI or timestamps", () => {
		const many = Array.from({ length: 200 }, (_, i) => `2024-05-01T10:00:00Z step ${i}`).join("\n");
		const tail = logTail(many)?.split("\n") ?? [];
		expect(tail).toHaveLength(LOG_TAIL_LINES);
		expect(tail.at(-1)).toBe("step 199");
		const wide = Array.from({ length: 60 }, (_, i) => `${i} ${"w".repeat(200)}`).join("\n");
		const bounded = logTail(wide) ?? "";
		expect(Buffer.byteLength(bounded)).toBeLessThanOrEqual(LOG_TAIL_BYTES);
		expect(bounded.endsWith(`59 ${"w".repeat(200)}`)).toBe(true);
		expect(logTail("\n\n")).toBeUndefined();
	});
});

describe("reviews and their threads", () => {
	it("reads reviews and the comments that start threads, leaving replies out", async () => {
		github.addCollaborator(REPO, "alice");
		const first = github.addReview(REPO, 1, {
			user: "acme",
			state: "COMMENTED",
			comments: [{ path: "src/new.ts", line: 1, body: "Why a constant?" }],
		});
		const root = first.comments[0]?.id as number;
		const second = github.addReview(REPO, 1, {
			user: "alice",
			state: "CHANGES_REQUESTED",
			body: "Please rework",
			comments: [
				{ path: "src/long.ts", line: 30, body: "Not like this" },
				{ in_reply_to: root, body: "Agreed, why?" },
				{ path: "src/new.ts", line: 1, body: "x".repeat(MAX_FOLLOW_UP_TEXT + 10) },
			],
		});
		const { reviews, comments } = await lisa.reviews(prUrl, [second.review.id, first.review.id]);
		expect(reviews).toEqual([
			{ id: second.review.id, author: "alice", state: "CHANGES_REQUESTED", body: "Please rework" },
			{ id: first.review.id, author: "acme", state: "COMMENTED" },
		]);
		const hunk = second.comments[0]?.diff_hunk.split("\n") ?? [];
		expect(hunk.length).toBeGreaterThan(20);
		expect(comments).toEqual([
			{
				id: second.comments[0]?.id,
				path: "src/long.ts",
				line: 30,
				diffHunk: [hunk[0], ...hunk.slice(-19)].join("\n"),
				body: "Not like this",
				author: "alice",
			},
			{
				id: second.comments[2]?.id,
				path: "src/new.ts",
				line: 1,
				diffHunk: "@@ -0,0 +1 @@\n+export const x = 1;",
				body: expect.stringMatching(/^x+…$/),
				author: "alice",
			},
			{
				id: root,
				path: "src/new.ts",
				line: 1,
				diffHunk: "@@ -0,0 +1 @@\n+export const x = 1;",
				body: "Why a constant?",
				author: "acme",
			},
		]);
		expect(comments[0]?.diffHunk?.split("\n")).toHaveLength(20);
		expect(comments[0]?.diffHunk?.endsWith("+line 30 changed")).toBe(true);
		expect(comments[1]?.body.length).toBe(MAX_FOLLOW_UP_TEXT);

		expect(await failed(lisa.reviews(prUrl, [12345]))).toMatchObject({
			name: "TrackerError",
			transient: false,
		});
		expect(await lisa.reviews(prUrl, [])).toEqual({ reviews: [], comments: [] });
	});
});

describe("answers on the pull request", () => {
	it("comments on the conversation", async () => {
		await lisa.comment(prUrl, "Round 1 done");
		expect(github.comments(REPO, 1).map((c) => [c.body, c.user.login])).toEqual([
			["Round 1 done", github.login],
		]);
		const post = github.requests.find((r) => r.method === "POST" && r.path.endsWith("/comments"));
		expect(post).toMatchObject({ path: "/repos/acme/api/issues/1/comments", status: 201 });
	});

	it("replies in a review thread", async () => {
		const { comments } = github.addReview(REPO, 1, {
			user: "acme",
			state: "COMMENTED",
			comments: [{ path: "src/new.ts", line: 1, body: "Why?" }],
		});
		const root = comments[0]?.id as number;
		await quick.reply(prUrl, root, "Because the spec says so.");
		expect(github.reviewComments(REPO, 1).at(-1)).toMatchObject({
			in_reply_to_id: root,
			body: "Because the spec says so.",
			user: { login: github.login },
		});
		expect(await failed(quick.reply(prUrl, 999, "x"))).toMatchObject({ transient: false });
	});

	it("requests reviewers, nothing for none, and fails permanently for a non-collaborator", async () => {
		github.addCollaborator(REPO, "alice");
		const before = github.requests.length;
		await quick.requestReviewers(prUrl, []);
		expect(github.requests.length).toBe(before);
		await quick.requestReviewers(prUrl, ["alice"]);
		expect(github.pulls(REPO)[0]?.requested_reviewers.map((u) => u.login)).toEqual(["alice"]);
		const stranger = await failed(quick.requestReviewers(prUrl, ["mallory"]));
		expect(stranger).toMatchObject({ name: "TrackerError", transient: false });
		expect((stranger as Error).message).toMatch(/collaborators/);
	});
});
