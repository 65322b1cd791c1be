import { mentionsLisa, writtenAt } from "../../domain/commands";
import { MARKER_PATTERN } from "../../domain/comments";
import {
	FAILING_CONCLUSIONS,
	type FollowUpTrigger,
	type Instruction,
	MAX_FOLLOW_UP_TEXT,
} from "../../domain/follow-up";
import { type EpicLabels, isEpic, whyEpicWaits } from "../../domain/qualify";
import { sameName } from "../../domain/workflow";

// GitHub webhook rules (docs/trackers.md › Using it with GitHub Issues,
// docs/follow-ups.md › Follow-ups). Pure: decides from the event name and payload alone. Payload
// shapes: GitHub's webhook-events-and-payloads docs.

interface Account {
	login?: string;
	/** "User", "Bot" or "Organization". */
	type?: string;
}

/** The repository as a `pull_requests` entry's head or base names it. */
interface RepoRef {
	id?: number;
	/** The repository's API URL. */
	url?: string;
	name?: string;
}

/** A pull request as check suites, check runs and workflow runs list it (no web URL). */
interface PullRequestEntry {
	number?: number;
	head?: { ref?: string; sha?: string; repo?: RepoRef };
	base?: { ref?: string; sha?: string; repo?: RepoRef };
}

/** A check suite, check run or workflow run. */
interface CheckObject {
	head_sha?: string;
	status?: string | null;
	conclusion?: string | null;
	pull_requests?: PullRequestEntry[];
	updated_at?: string | null;
	completed_at?: string | null;
}

export interface GitHubWebhook {
	action?: string;
	label?: { name?: string };
	issue?: {
		number?: number;
		title?: string;
		html_url?: string;
		/** Set when the issue is a pull request. */
		pull_request?: { html_url?: string } | null;
		updated_at?: string | null;
		/** Its labels after the event. */
		labels?: ({ name?: string } | string)[];
	};
	/** `issue_comment` and `pull_request_review_comment`. */
	comment?: {
		id?: number;
		body?: string;
		user?: Account | null;
		author_association?: string;
		/** A review comment's review. */
		pull_request_review_id?: number | null;
		created_at?: string | null;
		updated_at?: string | null;
	};
	review?: {
		id?: number;
		state?: string;
		body?: string | null;
		user?: Account | null;
		author_association?: string;
		submitted_at?: string | null;
	};
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
	check_suite?: CheckObject;
	check_run?: CheckObject;
	workflow_run?: CheckObject;
	repository?: { id?: number; full_name?: string; html_url?: string; url?: string };
	sender?: Account;
}

export interface GitHubRules {
	/** Whether GitHub Issues is the configured source (else only PR follow-ups are handled). */
	issues: boolean;
	label: string;
	/** owner/name of the issues; other repositories are ignored. */
	repo?: string;
	/** Lisa's login, for `@` mentions; without it only `/lisa` commands mention Lisa. */
	lisaLogin?: string;
	/** The epic label also triggers, as an epic run (docs/epics.md › Epics). */
	epic?: EpicLabels;
}

/** Something on a pull request asks for a follow-up round, if one of `prUrls` is a Lisa PR. */
export interface FollowUpVerdict {
	kind: "followup";
	/** The candidate pull requests' web URLs (the route keeps the one Lisa opened). */
	prUrls: string[];
	trigger: Exclude<FollowUpTrigger, "session_prompt">;
	/** The failing commit (CI). */
	headSha?: string;
	reviewId?: number;
	author?: string;
	/** GitHub's `author_association`: the pipeline decides who may drive Lisa. */
	association?: string;
	instruction?: Instruction;
}

export type GitHubVerdict =
	| {
			kind: "issue";
			issueId: string;
			actor?: string;
			why: string;
			/** The issue carries the epic label: plan it into sub-issues. */
			runKind?: "epic";
	  }
	| {
			kind: "pr.closed";
			runId: string;
			prUrl: string;
			merged: boolean;
			at?: string;
			by?: string;
			mergeCommitSha?: string;
	  }
	| FollowUpVerdict
	| { kind: "ignore"; reason: string };

/** The events whose completion reports a commit's checks. */
export const CHECK_EVENTS = ["check_suite", "check_run", "workflow_run"] as const;
type CheckEvent = (typeof CHECK_EVENTS)[number];
const isCheckEvent = (e: string): e is CheckEvent =>
	(CHECK_EVENTS as readonly string[]).includes(e);

export function gitHubVerdict(
	event: string,
	payload: GitHubWebhook,
	rules: GitHubRules,
): GitHubVerdict {
	const repo = payload.repository?.full_name;
	if (event === "pull_request") return pullRequestVerdict(payload);
	if (isCheckEvent(event)) return checkVerdict(event, payload);
	if (event === "pull_request_review") return reviewVerdict(payload);
	if (
		(event === "issue_comment" || event === "pull_request_review_comment") &&
		MARKER_PATTERN.test(payload.comment?.body ?? "")
	)
		return { kind: "ignore", reason: "Lisa's own comment (it carries Lisa's marker)" };
	if (event === "pull_request_review_comment")
		return mentionVerdict(payload, payload.pull_request?.html_url, "review_comment", rules);
	if (event === "issue_comment") {
		const pr = payload.issue?.pull_request;
		if (!pr) return { kind: "ignore", reason: "comments on issues are not followed" };
		return mentionVerdict(payload, pr.html_url ?? payload.issue?.html_url, "comment", rules);
	}
	if (event !== "issues") return { kind: "ignore", reason: `${event} events are not handled` };
	if (!rules.issues) return { kind: "ignore", reason: "the configured source is not github" };
	if (payload.action !== "labeled")
		return { kind: "ignore", reason: `issue ${payload.action ?? "event"} is not a trigger` };
	if (payload.issue?.pull_request)
		return { kind: "ignore", reason: "labels on pull requests are not a trigger" };
	const added = payload.label?.name;
	const labels = [
		...(payload.issue?.labels ?? []).map((l) => (typeof l === "string" ? l : (l.name ?? ""))),
		...(added ? [added] : []),
	];
	const epic = !!rules.epic && isEpic(labels, rules.epic);
	if (!sameName(added, rules.label) && !(epic && sameName(added, rules.epic?.label)))
		return {
			kind: "ignore",
			reason: `label "${added ?? "?"}" is not "${rules.label}"${rules.epic ? ` or "${rules.epic.label}"` : ""}`,
		};
	const waits = epic && rules.epic && whyEpicWaits(labels, rules.epic);
	if (waits) return { kind: "ignore", reason: `the epic waits: ${waits}` };
	if (rules.repo && !sameName(repo, rules.repo))
		return { kind: "ignore", reason: `issue is in ${repo}, not ${rules.repo}` };
	if (!repo || payload.issue?.number === undefined)
		return { kind: "ignore", reason: "payload has no repository or issue number" };
	return {
		kind: "issue",
		issueId: `${repo}#${payload.issue.number}`,
		actor: payload.sender?.login,
		why: `label "${sameName(added, rules.label) ? rules.label : rules.epic?.label}" added`,
		...(epic ? { runKind: "epic" as const } : {}),
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

const isBot = (account: Account | null | undefined) => account?.type?.toLowerCase() === "bot";

/** A failing check suite, check run or workflow run of the head commit of one of Lisa's PRs. */
function checkVerdict(event: CheckEvent, payload: GitHubWebhook): GitHubVerdict {
	const check = payload[event];
	if (payload.action !== "completed")
		return { kind: "ignore", reason: `${event} ${payload.action ?? "event"} is not followed` };
	const conclusion = check?.conclusion ?? "no conclusion";
	if (!(FAILING_CONCLUSIONS as readonly string[]).includes(conclusion))
		return { kind: "ignore", reason: `${event} ${conclusion} is not a failure` };
	const headSha = check?.head_sha;
	if (!headSha) return { kind: "ignore", reason: `${event} has no head commit` };
	const repo = payload.repository;
	const entries = (check?.pull_requests ?? []).filter(
		// GitHub lists pull requests of other repositories whose head is this commit too (a fork's
		// PR into another repository): only this repository's own pull requests are built a URL, and
		// only those whose head is still the failing commit (an older run's failure is stale).
		(p) => sameRepository(p.base?.repo, repo) && p.head?.sha === headSha,
	);
	const prUrls = [
		...new Set(
			entries.flatMap((p) =>
				p.number && repo?.html_url ? [`${repo.html_url}/pull/${p.number}`] : [],
			),
		),
	];
	if (!prUrls.length)
		return { kind: "ignore", reason: `${event} is not on an open pull request of this repository` };
	return { kind: "followup", prUrls, trigger: "ci_failure", headSha };
}

/** Whether a `pull_requests` entry's base is the event's repository: by API URL, else by id. */
function sameRepository(ref: RepoRef | undefined, repo: GitHubWebhook["repository"]): boolean {
	if (ref?.url && repo?.url) return ref.url === repo.url;
	return ref?.id !== undefined && ref.id === repo?.id;
}

/** A submitted review that asks for changes or comments; approvals make no round. */
function reviewVerdict(payload: GitHubWebhook): GitHubVerdict {
	if (payload.action !== "submitted")
		return {
			kind: "ignore",
			reason: `pull_request_review ${payload.action ?? "event"} is not followed`,
		};
	const review = payload.review;
	const state = review?.state?.toLowerCase() ?? "no state";
	if (state !== "changes_requested" && state !== "commented")
		return { kind: "ignore", reason: `a review ${state} asks for nothing` };
	// Another bot's review could answer Lisa's round with another review: no loops between bots.
	if (isBot(review?.user)) return { kind: "ignore", reason: "reviews by bots are not followed" };
	const prUrl = payload.pull_request?.html_url;
	if (!prUrl || !review?.id)
		return { kind: "ignore", reason: "payload has no pull request or review id" };
	return {
		kind: "followup",
		prUrls: [prUrl],
		trigger: "review",
		reviewId: review.id,
		...defined({ author: review.user?.login, association: review.author_association }),
	};
}

/**
 * A new comment on a pull request that mentions Lisa. A review's own comments arrive with the
 * review (`pull_request_review` makes its round): one of them counts alone only when it mentions
 * Lisa, so a review is never counted once per comment.
 */
function mentionVerdict(
	payload: GitHubWebhook,
	prUrl: string | undefined,
	via: "comment" | "review_comment",
	rules: GitHubRules,
): GitHubVerdict {
	const kind = via === "comment" ? "issue_comment" : "pull_request_review_comment";
	if (payload.action !== "created")
		return { kind: "ignore", reason: `${kind} ${payload.action ?? "event"} is not followed` };
	const comment = payload.comment;
	const body = comment?.body ?? "";
	if (!mentionsLisa(body, rules.lisaLogin))
		return { kind: "ignore", reason: "the comment does not mention Lisa" };
	if (isBot(comment?.user)) return { kind: "ignore", reason: "comments by bots are not followed" };
	if (!prUrl || !comment?.id)
		return { kind: "ignore", reason: "payload has no pull request or comment id" };
	const author = comment.user?.login;
	return {
		kind: "followup",
		prUrls: [prUrl],
		trigger: "mention",
		...defined({ author, association: comment.author_association }),
		instruction: {
			id: `${via === "comment" ? "comment" : "review-comment"}-${comment.id}`,
			...defined({ author, writtenAt: writtenAt(comment.created_at) }),
			body: body.slice(0, MAX_FOLLOW_UP_TEXT),
			via,
		},
	};
}

/** The fields that have a value: a verdict (and the message made of it) holds no `undefined`. */
function defined<T extends Record<string, string | undefined>>(fields: T): Partial<T> {
	return Object.fromEntries(
		Object.entries(fields).filter(([, v]) => v !== undefined),
	) as Partial<T>;
}
