import type { Octokit } from "octokit";
import type { CreatedIssue } from "../../domain/epic";
import { sameName } from "../../domain/workflow";
import {
	carriesMarker,
	checkMarker,
	checkSubIssue,
	type EpicTracker,
	type SubIssueInput,
	TrackerError,
} from "../tracker";
import { CLOSED, failure, gitHubIssueId, OPEN, type Ref, statusOf } from "./refs";

// Epics on GitHub Issues (docs/epics.md › Epics): sub-issues and "blocked by" dependencies where
// the server has them; elsewhere the sub-issue's body says both ("Part of #N", "Blocked by #M",
// written by the pipeline), and a sub-issue is found again by the marker in its body.

/** How GitHub answers a relation endpoint it does not have (GitHub Enterprise Server, some plans). */
const UNAVAILABLE = new Set([404, 410, 422]);
/** The most recent issues searched for a marker when sub-issues cannot be listed: 3 pages of 100. */
const SEARCH_PAGES = 3;

interface ApiIssue {
	id: number;
	number: number;
	body?: string | null;
	html_url: string;
	pull_request?: unknown;
	user?: { login: string; type?: string } | null;
}

/** Tolerates the endpoints a server does not have: undefined instead of their 404/410/422. */
async function unlessUnavailable<T>(fn: () => Promise<T>): Promise<T | undefined> {
	try {
		return await fn();
	} catch (err) {
		if (UNAVAILABLE.has(statusOf(err) ?? 0)) return undefined;
		throw err;
	}
}

export function gitHubEpics(octokit: Octokit, refOf: (issueId: string) => Ref): EpicTracker {
	const at = (ref: Ref) => ({ owner: ref.owner, repo: ref.name, issue_number: ref.number });
	const created = (repo: string, i: ApiIssue): CreatedIssue => {
		const id = gitHubIssueId({ repo, number: i.number });
		return { id, key: id, url: i.html_url };
	};

	// Only Lisa's own issues count: anyone may open an issue whose body copies a marker.
	let me: Promise<string | undefined> | undefined;
	const login = () => {
		me ??= octokit.rest.users.getAuthenticated().then(
			(r) => r.data.login,
			(err) => {
				// A GitHub App's installation token cannot read /user: its issues are by its bot user.
				if ([401, 403, 404].includes(statusOf(err) ?? 0)) return undefined;
				me = undefined; // an outage: ask again next time
				throw err;
			},
		);
		return me;
	};
	const ours = async (i: ApiIssue) => {
		const mine = await login();
		return mine ? sameName(i.user?.login ?? "", mine) : i.user?.type === "Bot";
	};
	const matching = async (issues: ApiIssue[], marker: string) => {
		for (const i of issues)
			if (!i.pull_request && carriesMarker(i.body, marker) && (await ours(i))) return i;
		return undefined;
	};

	/** Adds `issue` as a sub-issue of `epic`; false when the server has no sub-issues. */
	const link = async (epic: Ref, issue: ApiIssue) =>
		(await unlessUnavailable(() =>
			octokit.rest.issues.addSubIssue({ ...at(epic), sub_issue_id: issue.id }),
		)) !== undefined;

	return {
		async findSubIssue(epicId, marker) {
			checkMarker(marker);
			const epic = refOf(epicId);
			try {
				const subs = await unlessUnavailable(() =>
					octokit.rest.issues.listSubIssues({ ...at(epic), per_page: 100 }),
				);
				const listed = subs && (await matching(subs.data as ApiIssue[], marker));
				if (listed) return created(epic.repo, listed);
				// Not listed: created before a crash kept it from being added, or no sub-issues here.
				for (let page = 1; page <= SEARCH_PAGES; page++) {
					const { data } = await octokit.rest.issues.listForRepo({
						owner: epic.owner,
						repo: epic.name,
						state: "all",
						sort: "created",
						direction: "desc",
						per_page: 100,
						page,
					});
					const found = await matching(data as ApiIssue[], marker);
					if (found) {
						if (subs) await link(epic, found);
						return created(epic.repo, found);
					}
					if (data.length < 100) break;
				}
				return undefined;
			} catch (err) {
				throw failure(`finding the sub-issue of ${epicId}`, err);
			}
		},

		async createSubIssue(epicId, input: SubIssueInput) {
			checkSubIssue(input);
			const epic = refOf(epicId);
			// GitHub's states beyond open are status labels (as moveTo shows them).
			const isState = sameName(input.state, OPEN) || sameName(input.state, CLOSED);
			try {
				const { data } = await octokit.rest.issues.create({
					owner: epic.owner,
					repo: epic.name,
					title: input.title,
					body: input.body,
					...(isState ? {} : { labels: [input.state] }),
				});
				await link(epic, data as ApiIssue);
				return created(epic.repo, data as ApiIssue);
			} catch (err) {
				throw failure(`creating a sub-issue of ${epicId}`, err);
			}
		},

		async addBlocker(blockedId, blockerId) {
			const blocked = refOf(blockedId);
			const blocker = refOf(blockerId);
			try {
				const { data } = await octokit.rest.issues.get(at(blocker));
				const listed = await unlessUnavailable(() =>
					octokit.rest.issues.listDependenciesBlockedBy({ ...at(blocked), per_page: 100 }),
				);
				// No dependencies on this server: the sub-issue's body says it.
				if (!listed || listed.data.some((i) => i.id === data.id)) return;
				await unlessUnavailable(() =>
					octokit.rest.issues.addBlockedByDependency({ ...at(blocked), issue_id: data.id }),
				);
			} catch (err) {
				if (statusOf(err) === 404)
					throw new TrackerError(`GitHub issue ${blockerId} was not found`, false, { cause: err });
				throw failure(`recording that ${blockerId} blocks ${blockedId}`, err);
			}
		},

		async editComment(issueId, commentId, body) {
			const ref = refOf(issueId);
			if (!/^\d+$/.test(commentId))
				throw new TrackerError(`"${commentId}" is not a GitHub comment id (a number)`, false);
			try {
				await octokit.rest.issues.updateComment({
					owner: ref.owner,
					repo: ref.name,
					comment_id: Number(commentId),
					body,
				});
			} catch (err) {
				if (statusOf(err) === 404 || statusOf(err) === 410)
					throw new TrackerError(
						`GitHub comment ${commentId} on ${issueId} no longer exists`,
						false,
						{
							cause: err,
						},
					);
				throw failure(`editing comment ${commentId} on ${issueId}`, err);
			}
		},

		async addLabel(issueId, label) {
			const ref = refOf(issueId);
			try {
				// GitHub creates a missing label when someone with write access adds it.
				await octokit.rest.issues.addLabels({ ...at(ref), labels: [label] });
			} catch (err) {
				throw failure(`adding label "${label}" to ${issueId}`, err);
			}
		},
	};
}
