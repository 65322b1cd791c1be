import { MARKER_PATTERN } from "../../domain/comments";
import { sameName } from "../../domain/workflow";

// GitHub webhook rules (README › Using it with GitHub Issues). Pure: decides from the event name and payload alone.

export interface GitHubWebhook {
	action?: string;
	label?: { name?: string };
	issue?: { number?: number; title?: string; pull_request?: unknown; updated_at?: string | null };
	comment?: { body?: string };
	pull_request?: {
		html_url?: string;
		merged?: boolean;
		merged_at?: string | null;
		closed_at?: string | null;
		updated_at?: string | null;
		merge_commit_sha?: string | null;
		merged_by?: { login?: string } | null;
		body?: string | null;
	};
	repository?: { full_name?: string };
	sender?: { login?: string };
}

export interface GitHubRules {
	/** Whether GitHub Issues is the configured source (else only PR follow-ups are handled). */
	issues: boolean;
	label: string;
	/** owner/name of the issues; other repositories are ignored. */
	repo?: string;
}

export type GitHubVerdict =
	| { kind: "issue"; issueId: string; actor?: string; why: string }
	| {
			kind: "pr.closed";
			runId: string;
			prUrl: string;
			merged: boolean;
			at?: string;
			by?: string;
			mergeCommitSha?: string;
	  }
	| { kind: "ignore"; reason: string };

export function gitHubVerdict(
	event: string,
	payload: GitHubWebhook,
	rules: GitHubRules,
): GitHubVerdict {
	const repo = payload.repository?.full_name;
	if (event === "pull_request") return pullRequestVerdict(payload);
	if (event === "issue_comment" && MARKER_PATTERN.test(payload.comment?.body ?? ""))
		return { kind: "ignore", reason: "Lisa's own comment (it carries Lisa's marker)" };
	if (event !== "issues") return { kind: "ignore", reason: `${event} events are not handled` };
	if (!rules.issues) return { kind: "ignore", reason: "the configured source is not github" };
	if (payload.action !== "labeled")
		return { kind: "ignore", reason: `issue ${payload.action ?? "event"} is not a trigger` };
	if (payload.issue?.pull_request)
		return { kind: "ignore", reason: "labels on pull requests are not a trigger" };
	if (!sameName(payload.label?.name, rules.label))
		return {
			kind: "ignore",
			reason: `label "${payload.label?.name ?? "?"}" is not "${rules.label}"`,
		};
	if (rules.repo && !sameName(repo, rules.repo))
		return { kind: "ignore", reason: `issue is in ${repo}, not ${rules.repo}` };
	if (!repo || payload.issue?.number === undefined)
		return { kind: "ignore", reason: "payload has no repository or issue number" };
	return {
		kind: "issue",
		issueId: `${repo}#${payload.issue.number}`,
		actor: payload.sender?.login,
		why: `label "${rules.label}" added`,
	};
}

function pullRequestVerdict(payload: GitHubWebhook): GitHubVerdict {
	if (payload.action !== "closed")
		return { kind: "ignore", reason: `pull_request ${payload.action ?? "event"} is not followed` };
	const pr = payload.pull_request;
	// The run marker in the body, never the title, says the PR is Lisa's.
	const runId = pr?.body?.match(MARKER_PATTERN)?.[1];
	if (!pr?.html_url || !runId) return { kind: "ignore", reason: "not a Lisa pull request" };
	return {
		kind: "pr.closed",
		runId,
		prUrl: pr.html_url,
		merged: pr.merged === true,
		at: (pr.merged ? pr.merged_at : pr.closed_at) ?? undefined,
		by: pr.merged_by?.login ?? payload.sender?.login,
		mergeCommitSha: pr.merge_commit_sha ?? undefined,
	};
}
