import { LinearClient } from "@linear/sdk";
import type { SessionAuthor } from "../../domain/session-approver";
import { sameName } from "../../domain/workflow";
import {
	type AgentSessionState,
	type AgentSessions,
	type EpicTracker,
	type IssueQuery,
	type SessionActivity,
	type Tracker,
	TrackerError,
	type TrackerIssue,
} from "../tracker";
import { isLinearOAuthToken } from "./actor";
import { call, notFoundAs, stateNamed } from "./call";
import { linearEpics } from "./epics";

/** `ENG-123` from a Linear issue URL, else the reference as given (id or key). */
function linearIssueRef(ref: string): string {
	return ref.match(/\/issue\/([A-Za-z0-9]+-\d+)/)?.[1] ?? ref.trim();
}

/** One issue with what tells whether it still waits for Lisa (its state and labels), in one request. */
const ISSUE = `query LisaIssue($id: String!) {
  issue(id: $id) {
    id identifier title description url team { id }
    state { name type }
    labels(first: 250) { nodes { name } }
  }
}`;

interface IssueNode {
	id: string;
	identifier: string;
	title: string;
	description?: string | null;
	url: string;
	team?: { id: string } | null;
	state?: { name: string; type: string } | null;
	labels: { nodes: { name: string }[] };
}

const AGENT_SESSION = `query LisaAgentSession($id: String!) {
  agentSession(id: $id) { id status dismissedAt }
}`;

/**
 * A session message's author and the issue's team, with the author among its members or not, in one
 * request. Team.members leaves deactivated users out; `active` says so anyway. The user's id goes
 * twice: `user` takes a String, the members' filter an ID.
 */
const SESSION_AUTHOR = `query LisaSessionAuthor($userId: String!, $memberId: ID!, $issueId: String!) {
  user(id: $userId) { id name active guest app }
  issue(id: $issueId) { team { key members(filter: { id: { eq: $memberId } }, first: 1) { nodes { id } } } }
}`;

interface SessionAuthorAnswer {
	user?: { id: string; name: string; active: boolean; guest: boolean; app: boolean } | null;
	issue?: { team?: { key: string; members: { nodes: { id: string }[] } } | null } | null;
}

/** Linear's closed issues: the workflow state types of finished work. */
const CLOSED_STATE_TYPES = new Set(["completed", "canceled"]);

function toIssue(n: IssueNode): TrackerIssue {
	return {
		id: n.id,
		key: n.identifier,
		title: n.title,
		description: n.description ?? "",
		url: n.url,
		teamId: n.team?.id,
		labels: n.labels.nodes.map((l) => l.name),
		state: n.state?.name ?? "",
		closed: CLOSED_STATE_TYPES.has(n.state?.type ?? ""),
	};
}

/**
 * The original CLI's polling query: one request, blockers included
 * (docs/trackers.md › Polling mode (`lisa run`)).
 */
const NEXT_ISSUES = `query LisaNextIssues($filter: IssueFilter!, $first: Int!) {
  issues(filter: $filter, first: $first) {
    nodes {
      id identifier title description url priority team { id }
      state { name type }
      labels(first: 50) { nodes { name } }
      inverseRelations(first: 50) { nodes { type issue { identifier state { type } } } }
    }
  }
}`;

interface NextIssueNode extends IssueNode {
	priority: number;
	inverseRelations: {
		nodes: {
			type: string;
			issue?: { identifier: string; state?: { type: string } | null } | null;
		}[];
	};
}

/** Priority order of the original CLI: 1 urgent … 4 low, then 0 (none) last. */
const rank = (priority: number) => (priority === 0 ? 5 : priority);

/** The open blockers of an issue: `blocks` relations whose blocker is not completed or canceled. */
function openBlockers(node: Pick<NextIssueNode, "inverseRelations">): string[] {
	return node.inverseRelations.nodes
		.filter(
			(r) => r.type === "blocks" && !["completed", "canceled"].includes(r.issue?.state?.type ?? ""),
		)
		.map((r) => r.issue?.identifier ?? "?");
}

/** A client for a personal API key, or an app's OAuth access token (`lin_oauth_…`). */
export function linearClient(apiKey: string, apiUrl?: string): LinearClient {
	const auth = isLinearOAuthToken(apiKey) ? { accessToken: apiKey } : { apiKey };
	return new LinearClient({ ...auth, ...(apiUrl ? { apiUrl } : {}) });
}

/**
 * Linear through @linear/sdk. Workflow states are resolved by name within the issue's team.
 * `LINEAR_API_KEY` is a personal API key, or the OAuth access token of Lisa's Linear app
 * (`lin_oauth_…`, installed with actor=app), which agent sessions need.
 */
export class LinearTracker implements Tracker {
	readonly name = "linear" as const;
	readonly sessions: AgentSessions;
	readonly epics: EpicTracker;

	constructor(private readonly client: LinearClient) {
		this.epics = linearEpics(client);
		this.sessions = {
			state: (sessionId) => this.sessionState(sessionId),
			activity: (sessionId, content) => this.activity(sessionId, content),
			link: (sessionId, url, label) => this.link(sessionId, url, label),
			author: (userId, issueId) => this.sessionAuthor(userId, issueId),
		};
	}

	static fromEnv(apiKey: string, apiUrl?: string): LinearTracker {
		return new LinearTracker(linearClient(apiKey, apiUrl));
	}

	fetchIssue(ref: string): Promise<TrackerIssue> {
		const id = linearIssueRef(ref);
		return call(`fetching issue ${id}`, async () => {
			const res = await this.client.client
				.rawRequest<{ issue: IssueNode }, { id: string }>(ISSUE, { id })
				.catch(notFoundAs(`Linear issue ${id}`));
			if (!res.data?.issue) throw new TrackerError(`Linear issue ${id} was not found`, false);
			return toIssue(res.data.issue);
		});
	}

	nextIssues(query: IssueQuery, limit = 50): Promise<TrackerIssue[]> {
		const filter: Record<string, unknown> = {
			labels: { some: { name: { eqIgnoreCase: query.label } } },
			state: { name: { eqIgnoreCase: query.state } },
		};
		if (query.team)
			filter.team = {
				or: [{ key: { eqIgnoreCase: query.team } }, { name: { eqIgnoreCase: query.team } }],
			};
		if (query.project) filter.project = { name: { eqIgnoreCase: query.project } };
		return call(`listing issues labelled "${query.label}" in "${query.state}"`, async () => {
			const res = await this.client.client.rawRequest<
				{ issues: { nodes: NextIssueNode[] } },
				{ filter: Record<string, unknown>; first: number }
			>(NEXT_ISSUES, { filter, first: Math.min(limit, 50) });
			return (res.data?.issues.nodes ?? [])
				.filter((n) => openBlockers(n).length === 0)
				.sort((a, b) => rank(a.priority) - rank(b.priority))
				.map(toIssue);
		});
	}

	moveTo(issueId: string, stateName: string): Promise<void> {
		return call(`moving ${issueId} to "${stateName}"`, async () => {
			const issue = await this.client.issue(issueId);
			if (!issue.teamId) throw new TrackerError(`Linear issue ${issueId} has no team`, false);
			const states = await this.client.workflowStates({
				filter: { team: { id: { eq: issue.teamId } } },
				first: 100,
			});
			const state = stateNamed(states.nodes, stateName, issue.identifier);
			if (issue.stateId === state.id) return;
			const result = await this.client.updateIssue(issue.id, { stateId: state.id });
			if (!result.success) throw new TrackerError(`Linear refused the state change`, true);
		});
	}

	comment(issueId: string, body: string): Promise<string> {
		return call(`commenting on ${issueId}`, async () => {
			const result = await this.client.createComment({ issueId, body });
			if (!result.success || !result.commentId)
				throw new TrackerError("Linear refused the comment", true);
			return result.commentId;
		});
	}

	attachLink(issueId: string, url: string, title: string): Promise<void> {
		return call(`attaching ${url} to ${issueId}`, async () => {
			const result = await this.client.attachmentLinkURL(issueId, url, { title });
			if (!result.success) throw new TrackerError("Linear refused the attachment", true);
		});
	}

	removeLabel(issueId: string, label: string): Promise<void> {
		return call(`removing label "${label}" from ${issueId}`, async () => {
			const issue = await this.client.issue(issueId);
			const labels = await issue.labels({ first: 100 });
			const keep = labels.nodes.filter((l) => !sameName(l.name, label));
			if (keep.length === labels.nodes.length) return;
			const result = await this.client.updateIssue(issue.id, { labelIds: keep.map((l) => l.id) });
			if (!result.success) throw new TrackerError("Linear refused the label change", true);
		});
	}

	private sessionState(sessionId: string): Promise<AgentSessionState> {
		return call(`reading agent session ${sessionId}`, async () => {
			const res = await this.client.client
				.rawRequest<
					{ agentSession: { status: string; dismissedAt?: string | null } },
					{ id: string }
				>(AGENT_SESSION, { id: sessionId })
				.catch(notFoundAs(`Linear agent session ${sessionId}`));
			const session = res.data?.agentSession;
			if (!session)
				throw new TrackerError(`Linear agent session ${sessionId} was not found`, false);
			return { status: session.status, dismissed: !!session.dismissedAt };
		});
	}

	private sessionAuthor(userId: string, issueId: string): Promise<SessionAuthor> {
		return call(`reading Linear user ${userId}`, async () => {
			const res = await this.client.client
				.rawRequest<SessionAuthorAnswer, { userId: string; memberId: string; issueId: string }>(
					SESSION_AUTHOR,
					{ userId, memberId: userId, issueId },
				)
				.catch(notFoundAs(`Linear user ${userId} or issue ${issueId}`));
			const user = res.data?.user;
			const team = res.data?.issue?.team;
			if (!user) throw new TrackerError(`Linear user ${userId} was not found`, false);
			return {
				id: user.id,
				name: user.name,
				active: user.active,
				guest: user.guest,
				app: user.app,
				teamMember: team?.members.nodes.some((m) => m.id === user.id) ?? false,
				...(team ? { team: team.key } : {}),
			};
		});
	}

	private activity(sessionId: string, content: SessionActivity): Promise<void> {
		return call(`posting a ${content.type} to agent session ${sessionId}`, async () => {
			const result = await this.client.createAgentActivity({ agentSessionId: sessionId, content });
			if (!result.success) throw new TrackerError("Linear refused the agent activity", true);
		});
	}

	private link(sessionId: string, url: string, label: string): Promise<void> {
		return call(`linking agent session ${sessionId}`, async () => {
			const result = await this.client.updateAgentSession(sessionId, {
				addedExternalUrls: [{ url, label }],
			});
			if (!result.success) throw new TrackerError("Linear refused the session update", true);
		});
	}
}
