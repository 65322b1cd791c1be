import { describe, expect, it } from "vitest";
import { type GitHubWebhook, gitHubVerdict } from "./trigger";

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
