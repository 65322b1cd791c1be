// GitHub webhook deliveries built from the double's state, shaped like GitHub's `issues`,
// `issue_comment` and `pull_request` events (docs: webhook-events-and-payloads), with the headers
// GitHub sends.
import { randomUUID } from "node:crypto";
import type { GitHubComment, GitHubDouble, GitHubIssue, GitHubPull } from "./server";
import { signGitHub } from "./server";

const user = (login: string) => ({
	login,
	id: 1000 + login.length,
	type: login.endsWith("[bot]") ? "Bot" : "User",
	html_url: `https://github.com/${login}`,
});

function repository(double: GitHubDouble, fullName: string) {
	const [owner, name] = fullName.split("/") as [string, string];
	return {
		id: 4242,
		name,
		full_name: fullName,
		private: false,
		owner: user(owner),
		html_url: `https://github.com/${fullName}`,
		url: `${double.url}/repos/${fullName}`,
		default_branch: "main",
	};
}

/** `issues` with action `labeled` (or another action): the issue as the double holds it now. */
export function issuesEvent(
	double: GitHubDouble,
	fullName: string,
	issue: GitHubIssue,
	opts: { action?: string; label?: string; sender: string },
) {
	const current = double.issues(fullName).find((i) => i.number === issue.number) ?? issue;
	return {
		action: opts.action ?? "labeled",
		issue: current,
		...(opts.label
			? { label: current.labels.find((l) => l.name === opts.label) ?? { name: opts.label } }
			: {}),
		repository: repository(double, fullName),
		sender: user(opts.sender),
	};
}

export function issueCommentEvent(
	double: GitHubDouble,
	fullName: string,
	issue: GitHubIssue,
	comment: GitHubComment,
) {
	return {
		action: "created",
		issue,
		comment,
		repository: repository(double, fullName),
		sender: comment.user,
	};
}

/** `pull_request` closed: merged when the double merged it (see GitHubDouble.mergePull). */
export function pullRequestClosedEvent(
	double: GitHubDouble,
	fullName: string,
	pull: GitHubPull,
	sender: string,
) {
	return {
		action: "closed",
		number: pull.number,
		pull_request: pull,
		repository: repository(double, fullName),
		sender: user(sender),
	};
}

/** The headers of a delivery of `body` for `event`, signed with `secret`. */
export function githubHeaders(
	body: string,
	secret: string,
	event: string,
	deliveryId: string = randomUUID(),
): Record<string, string> {
	return {
		"content-type": "application/json",
		"user-agent": "GitHub-Hookshot/test",
		"x-github-event": event,
		"x-github-delivery": deliveryId,
		"x-github-hook-id": "1",
		"x-hub-signature-256": signGitHub(body, secret),
	};
}
