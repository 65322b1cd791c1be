import type { SourceName } from "../config/schema";
import type { IssueSnapshot } from "../domain/run";
import type { SessionActivity } from "./linear/session";

export type { SessionActivity };

// The tracker port: what the pipeline needs from Linear, Trello or GitHub Issues.

export interface TrackerIssue extends IssueSnapshot {
	/** Label names. */
	labels: string[];
	/**
	 * Where the issue is, by the name the config would use: Linear's workflow state, Trello's list,
	 * GitHub's `open` or `closed` (GitHub's other states are status labels, among `labels`).
	 */
	state: string;
	/** Done with: a closed GitHub issue, an archived Trello card, a completed or canceled Linear issue. */
	closed: boolean;
}

/** Which issues wait for Lisa: labelled `label` and in `state` (names as in the config). */
export interface IssueQuery {
	/** Linear team key/name, Trello board name, GitHub owner/name. */
	team?: string;
	/** Linear project name. */
	project?: string;
	label: string;
	state: string;
	/** Every state name of the workflow (pick_from, in_progress, done, merged). */
	workflow: string[];
}

/** An agent session as Linear reports it now. */
export interface AgentSessionState {
	/** `pending`, `active`, `awaitingInput`, `complete`, `error` or `stale`. */
	status: string;
	/** Someone dismissed the session (which takes the issue away from the agent). */
	dismissed: boolean;
}

/** Linear agent sessions: the native surface for runs started by delegating an issue to Lisa. */
export interface AgentSessions {
	/** Throws TrackerError (not transient) when there is no such session. */
	state(sessionId: string): Promise<AgentSessionState>;
	activity(sessionId: string, content: SessionActivity): Promise<void>;
	/** Shows a link (the run's dashboard page) on the session. */
	link(sessionId: string, url: string, label: string): Promise<void>;
}

export interface Tracker {
	readonly name: SourceName;
	/** By id, key (ENG-123, owner/name#12, a card's short link) or URL. Throws TrackerError (not transient) when it does not exist. */
	fetchIssue(ref: string): Promise<TrackerIssue>;
	/** Issues matching the query in the order to work on them: the first is the next issue. */
	nextIssues(query: IssueQuery, limit?: number): Promise<TrackerIssue[]>;
	/**
	 * Moves the issue to the workflow state / list / status label with this name; `workflow` names
	 * every state of the workflow, so a tracker that shows states as labels drops the previous one.
	 */
	moveTo(issueId: string, state: string, workflow?: string[]): Promise<void>;
	comment(issueId: string, body: string): Promise<void>;
	attachLink(issueId: string, url: string, title: string): Promise<void>;
	removeLabel(issueId: string, label: string): Promise<void>;
	/** Only trackers with native agent sessions (Linear). */
	readonly sessions?: AgentSessions;
}

/** A tracker call that failed; `transient` failures are retried, the others are reported. */
export class TrackerError extends Error {
	constructor(
		message: string,
		readonly transient: boolean,
		options?: { cause?: unknown },
	) {
		super(message, options);
		this.name = "TrackerError";
	}
}

export class NotConfigured extends Error {
	constructor(message: string) {
		super(message);
		this.name = "NotConfigured";
	}
}
