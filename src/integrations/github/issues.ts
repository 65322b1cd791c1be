import type { Octokit } from "octokit";
import { sameName } from "../../domain/workflow";
import {
	type EpicTracker,
	type IssueQuery,
	type Tracker,
	TrackerError,
	type TrackerIssue,
} from "../tracker";
import { type GitHubAuth, githubClient } from "./app";
import { gitHubEpics } from "./epics";
import {
	CLOSED,
	failure,
	type GitHubIssueRef,
	gitHubIssueId,
	OPEN,
	parseGitHubIssueRef,
	type Ref,
	statusOf,
} from "./refs";

// GitHub Issues through octokit. The trigger is a label; workflow states are status labels, except
// the names "open" and "closed", which are the issue's own state (so `pick_from: open` needs no
// label). Issues are identified as `owner/name#number`, which is also how a PR body links them.

/** The label changes (and open/close) that move an issue to `target` within `workflow`. */
export function statusChange(
	current: string[],
	target: string,
	workflow: string[],
): { add?: string; remove: string[]; state?: "open" | "closed" } {
	const isState = (n: string) => sameName(n, OPEN) || sameName(n, CLOSED);
	const remove = current.filter(
		(l) => !sameName(l, target) && workflow.some((w) => !isState(w) && sameName(w, l)),
	);
	if (sameName(target, OPEN)) return { remove, state: "open" };
	if (sameName(target, CLOSED)) return { remove, state: "closed" };
	return {
		remove,
		add: current.some((l) => sameName(l, target)) ? undefined : target,
		state: "open",
	};
}

interface ApiIssue {
	number: number;
	title: string;
	body?: string | null;
	html_url: string;
	state: string;
	labels: (string | { name?: string })[];
	pull_request?: unknown;
}

const labelNames = (issue: ApiIssue) =>
	issue.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))).filter(Boolean);

/** The issue as the tracker port returns it; `ref` is the issue asked for. */
function toIssue(i: ApiIssue, ref: GitHubIssueRef): TrackerIssue {
	const id = gitHubIssueId(ref);
	return {
		id,
		key: id,
		title: i.title,
		description: i.body ?? "",
		url: i.html_url,
		teamId: ref.repo,
		labels: labelNames(i),
		state: i.state,
		closed: i.state === CLOSED,
	};
}

export class GitHubTracker implements Tracker {
	readonly name = "github" as const;
	readonly epics: EpicTracker;

	constructor(
		private readonly octokit: Octokit,
		private readonly opts: {
			/** owner/name of the issues when a ref has no repository (config: source_config.team). */
			defaultRepo?: () => string | undefined;
		} = {},
	) {
		this.epics = gitHubEpics(octokit, (issueId) => this.ref(issueId));
	}

	static fromEnv(
		auth: GitHubAuth,
		apiUrl: string | undefined,
		opts: ConstructorParameters<typeof GitHubTracker>[1],
	): GitHubTracker {
		return new GitHubTracker(githubClient(auth, apiUrl), opts);
	}

	private ref(issueId: string): Ref {
		const ref = parseGitHubIssueRef(issueId, this.opts.defaultRepo?.());
		if (!ref)
			throw new TrackerError(
				`"${issueId}" is not a GitHub issue (use owner/name#12, an issue URL, or #12 with source_config.team set)`,
				false,
			);
		const [owner, name] = ref.repo.split("/") as [string, string];
		return { ...ref, owner, name };
	}

	private async issue(issueId: string): Promise<ApiIssue & { ref: Ref }> {
		const ref = this.ref(issueId);
		try {
			const { data } = await this.octokit.rest.issues.get({
				owner: ref.owner,
				repo: ref.name,
				issue_number: ref.number,
			});
			if (data.pull_request)
				throw new TrackerError(`${gitHubIssueId(ref)} is a pull request, not an issue`, false);
			return { ...(data as ApiIssue), ref };
		} catch (err) {
			const status = statusOf(err);
			if (status === 404 || status === 410)
				throw new TrackerError(`GitHub issue ${gitHubIssueId(ref)} was not found`, false);
			throw failure(`reading ${gitHubIssueId(ref)}`, err);
		}
	}

	async fetchIssue(ref: string): Promise<TrackerIssue> {
		const issue = await this.issue(ref);
		return toIssue(issue, issue.ref);
	}

	async nextIssues(query: IssueQuery, limit = 50): Promise<TrackerIssue[]> {
		const repo = query.team ?? this.opts.defaultRepo?.();
		if (!repo?.includes("/"))
			throw new TrackerError("GitHub Issues needs source_config.team: owner/name", false);
		const [owner, name] = repo.split("/") as [string, string];
		const isOpenState = sameName(query.state, OPEN);
		const labels = isOpenState ? [query.label] : [query.label, query.state];
		try {
			const { data } = await this.octokit.rest.issues.listForRepo({
				owner,
				repo: name,
				state: sameName(query.state, CLOSED) ? "closed" : "open",
				labels: labels.join(","),
				sort: "created",
				direction: "asc",
				per_page: Math.min(limit, 100),
			});
			// "open" means open and in no other workflow state (no in-progress or done label).
			const others = query.workflow.filter((w) => !sameName(w, query.state));
			return (data as ApiIssue[])
				.filter((i) => !i.pull_request)
				.filter(
					(i) => !isOpenState || !labelNames(i).some((l) => others.some((o) => sameName(o, l))),
				)
				.map((i) => toIssue(i, { repo, number: i.number }));
		} catch (err) {
			throw failure(`listing issues of ${repo}`, err);
		}
	}

	async moveTo(issueId: string, state: string, workflow: string[] = []): Promise<void> {
		const issue = await this.issue(issueId);
		const { owner, name, number } = issue.ref;
		const change = statusChange(labelNames(issue), state, [...workflow, state]);
		const target = { owner, repo: name, issue_number: number };
		try {
			for (const label of change.remove)
				await this.octokit.rest.issues.removeLabel({ ...target, name: label }).catch((err) => {
					if (statusOf(err) !== 404) throw err;
				});
			if (change.add) await this.octokit.rest.issues.addLabels({ ...target, labels: [change.add] });
			if (change.state && change.state !== issue.state)
				await this.octokit.rest.issues.update({ ...target, state: change.state });
		} catch (err) {
			throw failure(`moving ${issueId} to "${state}"`, err);
		}
	}

	async comment(issueId: string, body: string): Promise<string> {
		const { owner, name, number } = this.ref(issueId);
		try {
			const { data } = await this.octokit.rest.issues.createComment({
				owner,
				repo: name,
				issue_number: number,
				body,
			});
			return String(data.id);
		} catch (err) {
			throw failure(`commenting on ${issueId}`, err);
		}
	}

	/**
	 * Nothing to call: the PR body's closing reference (`Resolves owner/name#12`) is what links a
	 * pull request to a GitHub issue (and closes it on merge).
	 */
	async attachLink(): Promise<void> {}

	async removeLabel(issueId: string, label: string): Promise<void> {
		const issue = await this.issue(issueId);
		const { owner, name, number } = issue.ref;
		const present = labelNames(issue).find((l) => sameName(l, label));
		if (!present) return;
		try {
			await this.octokit.rest.issues.removeLabel({
				owner,
				repo: name,
				issue_number: number,
				name: present,
			});
		} catch (err) {
			if (statusOf(err) === 404) return;
			throw failure(`removing label "${label}" from ${issueId}`, err);
		}
	}
}
