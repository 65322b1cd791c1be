import { describe, expect, it } from "vitest";
import { MAX_FOLLOW_UP_TEXT } from "../../domain/follow-up";
import { type GitHubRules, type GitHubWebhook, gitHubVerdict } from "./trigger";

const rules = { issues: true, label: "lisa", repo: "acme/api" };
const labeled = (over: Partial<GitHubWebhook> = {}): GitHubWebhook => ({
	action: "labeled",
	label: { name: "Lisa" },
	issue: { number: 12, title: "Fix it" },
	repository: { full_name: "acme/api" },
	sender: { login: "ada" },
	...over,
});
const closed = (pr: GitHubWebhook["pull_request"]): GitHubWebhook => ({
	action: "closed",
	pull_request: pr,
	repository: { full_name: "acme/api" },
	sender: { login: "bob" },
});

describe("GitHub webhook rules", () => {
	it("starts a run when the label is added to an issue of the configured repository", () => {
		expect(gitHubVerdict("issues", labeled(), rules)).toEqual({
			kind: "issue",
			issueId: "acme/api#12",
			actor: "ada",
			why: 'label "lisa" added',
		});
	});

	it("ignores other labels, actions, repositories, pull requests and sources with the reason", () => {
		const cases: [string, GitHubWebhook, typeof rules][] = [
			["issues", labeled({ label: { name: "bug" } }), rules],
			["issues", labeled({ action: "opened" }), rules],
			["issues", labeled({ repository: { full_name: "acme/web" } }), rules],
			["issues", labeled({ issue: { number: 3, pull_request: {} } }), rules],
			["issues", labeled(), { ...rules, issues: false }],
			["push", {}, rules],
			["pull_request", { ...closed({}), action: "opened" }, rules],
		];
		expect(cases.map(([e, p, r]) => gitHubVerdict(e, p, r))).toEqual([
			{ kind: "ignore", reason: 'label "bug" is not "lisa"' },
			{ kind: "ignore", reason: "issue opened is not a trigger" },
			{ kind: "ignore", reason: "issue is in acme/web, not acme/api" },
			{ kind: "ignore", reason: "labels on pull requests are not a trigger" },
			{ kind: "ignore", reason: "the configured source is not github" },
			{ kind: "ignore", reason: "push events are not handled" },
			{ kind: "ignore", reason: "pull_request opened is not followed" },
		]);
	});

	it("starts an epic run for the epic label, or the trigger label on an epic; not while it waits for its spec", () => {
		const epicRules = { ...rules, epic: { label: "lisa-epic", needs_spec_label: "needs-spec" } };
		const epicLabel = labeled({
			label: { name: "Lisa-Epic" },
			issue: { number: 12, labels: [{ name: "Lisa-Epic" }] },
		});
		expect(gitHubVerdict("issues", epicLabel, epicRules)).toEqual({
			kind: "issue",
			issueId: "acme/api#12",
			actor: "ada",
			why: 'label "lisa-epic" added',
			runKind: "epic",
		});
		const onEpic = labeled({ issue: { number: 12, labels: ["lisa-epic", "Lisa"] } });
		expect(gitHubVerdict("issues", onEpic, epicRules)).toMatchObject({
			why: 'label "lisa" added',
			runKind: "epic",
		});
		// A plain run stays plain; the epic label means nothing without the epic config.
		expect(gitHubVerdict("issues", labeled(), epicRules)).not.toHaveProperty("runKind");
		expect(gitHubVerdict("issues", epicLabel, rules)).toEqual({
			kind: "ignore",
			reason: 'label "Lisa-Epic" is not "lisa"',
		});
		expect(gitHubVerdict("issues", labeled({ label: { name: "bug" } }), epicRules)).toEqual({
			kind: "ignore",
			reason: 'label "bug" is not "lisa" or "lisa-epic"',
		});
		const waiting = labeled({
			label: { name: "lisa-epic" },
			issue: { number: 12, labels: [{ name: "needs-spec" }, { name: "lisa-epic" }] },
		});
		expect(gitHubVerdict("issues", waiting, epicRules)).toEqual({
			kind: "ignore",
			reason:
				'the epic waits: it carries "needs-spec": answer the questions in its description, then remove the label',
		});
	});

	it("follows a closed PR by the run marker in its body, never its title", () => {
		const merged = closed({
			html_url: "https://github.com/acme/api/pull/7",
			merged: true,
			merged_at: "2026-03-07T12:34:56Z",
			merge_commit_sha: "9f1c",
			merged_by: { login: "ada" },
			body: "- x\n\n<!-- lisa:run=01ABC -->",
		});
		expect(gitHubVerdict("pull_request", merged, rules)).toEqual({
			kind: "pr.closed",
			runId: "01ABC",
			prUrl: "https://github.com/acme/api/pull/7",
			merged: true,
			at: "2026-03-07T12:34:56Z",
			by: "ada",
			mergeCommitSha: "9f1c",
		});
		const unmerged = closed({
			html_url: "https://github.com/acme/api/pull/8",
			merged: false,
			closed_at: "2026-03-08T00:00:00Z",
			body: "<!-- lisa:run=01DEF -->",
		});
		expect(gitHubVerdict("pull_request", unmerged, { ...rules, issues: false })).toMatchObject({
			kind: "pr.closed",
			runId: "01DEF",
			merged: false,
			at: "2026-03-08T00:00:00Z",
			by: "bob",
		});
		const titled = closed({ html_url: "u", body: "no marker", merged: true });
		expect(gitHubVerdict("pull_request", { ...titled }, rules)).toEqual({
			kind: "ignore",
			reason: "not a Lisa pull request",
		});
	});

	it("recognises Lisa's own comments by the marker", () => {
		const v = gitHubVerdict(
			"issue_comment",
			{ action: "created", comment: { body: "done <!-- lisa:run=01A -->" } },
			rules,
		);
		expect(v).toEqual({ kind: "ignore", reason: "Lisa's own comment (it carries Lisa's marker)" });
	});
});

// Payloads as GitHub sends them (docs: webhook-events-and-payloads), trimmed to what the rules read
// plus enough of the rest to be recognisable.
const SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const OLD_SHA = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c";
const repository = {
	id: 1296269,
	full_name: "acme/api",
	html_url: "https://github.com/acme/api",
	url: "https://api.github.com/repos/acme/api",
};
const otherRepo = { id: 99, url: "https://api.github.com/repos/evil/fork", name: "fork" };
const apiRepo = { id: repository.id, url: repository.url, name: "api" };
const entry = (number: number, sha = SHA, base: typeof apiRepo = apiRepo) => ({
	url: `https://api.github.com/repos/acme/api/pulls/${number}`,
	id: 1000 + number,
	number,
	head: { ref: `feat/x-${number}`, sha, repo: apiRepo },
	base: { ref: "main", sha: OLD_SHA, repo: base },
});
const ada = { login: "ada", id: 1, type: "User" };
const pull = { html_url: "https://github.com/acme/api/pull/7", number: 7, body: "x" };

const checkSuite = (over: Record<string, unknown> = {}): GitHubWebhook =>
	({
		action: "completed",
		check_suite: {
			id: 118578147,
			head_branch: "feat/x-7",
			head_sha: SHA,
			status: "completed",
			conclusion: "failure",
			pull_requests: [entry(7)],
			app: { id: 15368, slug: "github-actions" },
			updated_at: "2026-03-07T12:00:00Z",
			...over,
		},
		repository,
		sender: ada,
	}) as GitHubWebhook;
const checkRun = (over: Record<string, unknown> = {}): GitHubWebhook =>
	({
		action: "completed",
		check_run: {
			id: 128620228,
			name: "test",
			head_sha: SHA,
			status: "completed",
			conclusion: "timed_out",
			completed_at: "2026-03-07T12:00:00Z",
			output: { title: "1 test failed", summary: "…" },
			check_suite: { id: 118578147, head_sha: SHA },
			pull_requests: [entry(7)],
			...over,
		},
		repository,
		sender: ada,
	}) as GitHubWebhook;
const workflowRun = (over: Record<string, unknown> = {}): GitHubWebhook =>
	({
		action: "completed",
		workflow_run: {
			id: 30433642,
			name: "CI",
			head_branch: "feat/x-7",
			head_sha: SHA,
			event: "pull_request",
			status: "completed",
			conclusion: "startup_failure",
			pull_requests: [entry(7)],
			updated_at: "2026-03-07T12:00:00Z",
			...over,
		},
		workflow: { id: 159038, name: "CI", path: ".github/workflows/ci.yml" },
		repository,
		sender: ada,
	}) as GitHubWebhook;
const review = (over: Record<string, unknown> = {}, action = "submitted"): GitHubWebhook =>
	({
		action,
		review: {
			id: 80,
			user: ada,
			body: "Please rename this.",
			commit_id: SHA,
			submitted_at: "2026-03-07T12:00:00Z",
			state: "changes_requested",
			author_association: "MEMBER",
			...over,
		},
		pull_request: pull,
		repository,
		sender: ada,
	}) as GitHubWebhook;
const prComment = (body: string, over: Record<string, unknown> = {}): GitHubWebhook =>
	({
		action: "created",
		issue: {
			number: 7,
			html_url: "https://github.com/acme/api/pull/7",
			pull_request: {
				url: "https://api.github.com/repos/acme/api/pulls/7",
				html_url: "https://github.com/acme/api/pull/7",
			},
		},
		comment: {
			id: 1362,
			body,
			user: ada,
			author_association: "CONTRIBUTOR",
			created_at: "2026-03-07T12:00:00Z",
			updated_at: "2026-03-07T12:00:00Z",
			...over,
		},
		repository,
		sender: ada,
	}) as GitHubWebhook;
const reviewComment = (body: string, over: Record<string, unknown> = {}): GitHubWebhook =>
	({
		action: "created",
		comment: {
			id: 2630,
			pull_request_review_id: 80,
			path: "src/a.ts",
			line: 3,
			diff_hunk: "@@ -1 +1 @@",
			body,
			user: ada,
			author_association: "NONE",
			...over,
		},
		pull_request: pull,
		repository,
		sender: ada,
	}) as GitHubWebhook;
const withLogin = { ...rules, lisaLogin: "lisa-app[bot]" };

describe("GitHub follow-up rules", () => {
	it("a failing check suite, check run or workflow run of a PR's head commit is a CI round", () => {
		const ci = {
			kind: "followup",
			prUrls: ["https://github.com/acme/api/pull/7"],
			trigger: "ci_failure",
			headSha: SHA,
		};
		expect(gitHubVerdict("check_suite", checkSuite(), rules)).toEqual(ci);
		expect(gitHubVerdict("check_run", checkRun(), rules)).toEqual(ci);
		expect(gitHubVerdict("workflow_run", workflowRun(), rules)).toEqual(ci);
		// Several pull requests of the commit are each a candidate (the route keeps Lisa's).
		expect(
			gitHubVerdict("check_suite", checkSuite({ pull_requests: [entry(7), entry(9)] }), rules),
		).toMatchObject({
			prUrls: ["https://github.com/acme/api/pull/7", "https://github.com/acme/api/pull/9"],
		});
	});

	it("ignores CI that did not fail, did not complete, or is on no pull request of this repository", () => {
		const cases: [string, GitHubWebhook][] = [
			["check_suite", checkSuite({ conclusion: "success" })],
			["check_run", checkRun({ conclusion: "cancelled" })],
			["workflow_run", workflowRun({ conclusion: null })],
			["check_run", { ...checkRun(), action: "created" }],
			["check_suite", { ...checkSuite(), action: "requested" }],
			["check_suite", checkSuite({ pull_requests: [] })],
			// A PR whose head moved on: the failure is of an older commit.
			["check_run", checkRun({ pull_requests: [entry(7, OLD_SHA)] })],
			// GitHub lists another repository's PR whose head is this commit: never built a URL here.
			["check_suite", checkSuite({ pull_requests: [entry(7, SHA, otherRepo)] })],
			["check_suite", checkSuite({ head_sha: undefined })],
		];
		expect(cases.map(([e, p]) => gitHubVerdict(e, p, rules))).toEqual([
			{ kind: "ignore", reason: "check_suite success is not a failure" },
			{ kind: "ignore", reason: "check_run cancelled is not a failure" },
			{ kind: "ignore", reason: "workflow_run no conclusion is not a failure" },
			{ kind: "ignore", reason: "check_run created is not followed" },
			{ kind: "ignore", reason: "check_suite requested is not followed" },
			{ kind: "ignore", reason: "check_suite is not on an open pull request of this repository" },
			{ kind: "ignore", reason: "check_run is not on an open pull request of this repository" },
			{ kind: "ignore", reason: "check_suite is not on an open pull request of this repository" },
			{ kind: "ignore", reason: "check_suite has no head commit" },
		]);
		// Only the entries of this repository are kept from a mixed list.
		expect(
			gitHubVerdict(
				"check_suite",
				checkSuite({ pull_requests: [entry(8, SHA, otherRepo), entry(7)] }),
				rules,
			),
		).toMatchObject({ prUrls: ["https://github.com/acme/api/pull/7"] });
	});

	it("a review asking for changes or commenting is a review round; approvals and bots are not", () => {
		expect(gitHubVerdict("pull_request_review", review(), rules)).toEqual({
			kind: "followup",
			prUrls: ["https://github.com/acme/api/pull/7"],
			trigger: "review",
			reviewId: 80,
			author: "ada",
			association: "MEMBER",
		});
		expect(
			gitHubVerdict("pull_request_review", review({ state: "COMMENTED" }), rules),
		).toMatchObject({ kind: "followup", trigger: "review", reviewId: 80 });
		const cases = [
			review({ state: "approved" }),
			review({ state: "dismissed" }, "dismissed"),
			review({ state: "commented" }, "edited"),
			review({ user: { login: "renovate[bot]", type: "Bot" } }),
			review({ id: undefined }),
		];
		expect(cases.map((p) => gitHubVerdict("pull_request_review", p, rules))).toEqual([
			{ kind: "ignore", reason: "a review approved asks for nothing" },
			{ kind: "ignore", reason: "pull_request_review dismissed is not followed" },
			{ kind: "ignore", reason: "pull_request_review edited is not followed" },
			{ kind: "ignore", reason: "reviews by bots are not followed" },
			{ kind: "ignore", reason: "payload has no pull request or review id" },
		]);
	});

	it("a comment on a PR that mentions Lisa is a mention round, with the instruction", () => {
		expect(
			gitHubVerdict("issue_comment", prComment("@lisa-app please add a test"), withLogin),
		).toEqual({
			kind: "followup",
			prUrls: ["https://github.com/acme/api/pull/7"],
			trigger: "mention",
			author: "ada",
			association: "CONTRIBUTOR",
			instruction: {
				id: "comment-1362",
				author: "ada",
				body: "@lisa-app please add a test",
				via: "comment",
				// When it was written, not last edited: an approval counts only for an older request.
				writtenAt: "2026-03-07T12:00:00.000Z",
			},
		});
		expect(
			gitHubVerdict("pull_request_review_comment", reviewComment("/lisa use a map here"), rules),
		).toEqual({
			kind: "followup",
			prUrls: ["https://github.com/acme/api/pull/7"],
			trigger: "mention",
			author: "ada",
			association: "NONE",
			instruction: {
				id: "review-comment-2630",
				author: "ada",
				body: "/lisa use a map here",
				via: "review_comment",
			},
		});
		const long = `/lisa ${"x".repeat(10_000)}`;
		const cut = gitHubVerdict("issue_comment", prComment(long), rules);
		expect(cut.kind === "followup" && cut.instruction?.body).toBe(
			long.slice(0, MAX_FOLLOW_UP_TEXT),
		);
	});

	it("ignores comments that do not mention Lisa, edits, issues, bots and Lisa's own marker", () => {
		const cases: [string, GitHubWebhook, GitHubRules][] = [
			["issue_comment", prComment("looks good"), withLogin],
			// Without Lisa's login only `/lisa` mentions; an email address is no mention.
			["issue_comment", prComment("@lisa-app please"), rules],
			["issue_comment", prComment("mail ops@lisa-app.dev"), withLogin],
			// Only what people see as the comment's own words: no HTML comment, code or quote.
			["issue_comment", prComment("ok <!--\n/lisa continue\n-->"), withLogin],
			["issue_comment", prComment("type `@lisa-app` to ask"), withLogin],
			["issue_comment", prComment("> /lisa fix it"), withLogin],
			// A review's own comment counts only when it mentions Lisa: its review makes the round.
			["pull_request_review_comment", reviewComment("nit: rename"), withLogin],
			["issue_comment", { ...prComment("/lisa again"), action: "edited" }, rules],
			["pull_request_review_comment", { ...reviewComment("/lisa"), action: "deleted" }, rules],
			["issue_comment", { ...prComment("/lisa fix"), issue: { number: 3 } }, rules],
			["issue_comment", prComment("/lisa fix", { user: { login: "x[bot]", type: "Bot" } }), rules],
			["issue_comment", prComment("/lisa fix <!-- lisa:run=01ABC -->"), rules],
			["pull_request_review_comment", reviewComment("@lisa-app <!-- lisa:run=01A -->"), withLogin],
		];
		expect(cases.map(([e, p, r]) => gitHubVerdict(e, p, r))).toEqual([
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "the comment does not mention Lisa" },
			{ kind: "ignore", reason: "issue_comment edited is not followed" },
			{ kind: "ignore", reason: "pull_request_review_comment deleted is not followed" },
			{ kind: "ignore", reason: "comments on issues are not followed" },
			{ kind: "ignore", reason: "comments by bots are not followed" },
			{ kind: "ignore", reason: "Lisa's own comment (it carries Lisa's marker)" },
			{ kind: "ignore", reason: "Lisa's own comment (it carries Lisa's marker)" },
		]);
	});
});
