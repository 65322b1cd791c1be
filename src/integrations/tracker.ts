import type { SourceName } from "../config/schema";
import type { CreatedIssue } from "../domain/epic";
import type { IssueSnapshot } from "../domain/run";
import type { SessionActivity } from "../domain/session-activity";
import type { SessionAuthor } from "../domain/session-approver";

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
	/**
	 * The user who wrote in a session, and whether they are a member of the issue's team (who may
	 * approve spending). Throws TrackerError (not transient) when Linear knows no such user or issue.
	 */
	author(userId: string, issueId: string): Promise<SessionAuthor>;
}

/** A sub-issue to create under an epic. */
export interface SubIssueInput {
	title: string;
	/** Markdown; ends with `marker`. */
	body: string;
	/**
	 * An HTML comment naming the epic run and the task, carried in the body: it finds a sub-issue
	 * created before its id was recorded (a crash between the two), so nothing is created twice.
	 */
	marker: string;
	/** The workflow state / list to put it in (`source_config.pick_from`). */
	state: string;
}

/** What epics need beyond a single issue (docs/epics.md › Epics). */
export interface EpicTracker {
	/** The sub-issue of `epicId` whose body carries `marker`, if one exists. */
	findSubIssue(epicId: string, marker: string): Promise<CreatedIssue | undefined>;
	/**
	 * Creates the issue as a sub-issue of `epicId`: a Linear sub-issue, a GitHub sub-issue (or an
	 * issue whose body links the epic where sub-issues are unavailable), a Trello card in the state's
	 * list plus an item on the epic card's checklist.
	 */
	createSubIssue(epicId: string, input: SubIssueInput): Promise<CreatedIssue>;
	/**
	 * Records that `blockerId` must be done before `blockedId`: a Linear `blocks` relation, a GitHub
	 * "blocked by" dependency; a no-op where the tracker has none (the body says it). Idempotent.
	 */
	addBlocker(blockedId: string, blockerId: string): Promise<void>;
	/** Throws TrackerError (not transient) when the comment no longer exists. */
	editComment(issueId: string, commentId: string, body: string): Promise<void>;
	/** Adds a label, creating it when the tracker needs it to exist (`needs-spec`). */
	addLabel(issueId: string, label: string): Promise<void>;
	/**
	 * Where the epic lists its tasks as items to tick (Trello's checklist on the epic card): ticks
	 * the sub-issue's item, its task done. A no-op when it is not listed or already ticked.
	 */
	checkTask?(epicId: string, subIssue: CreatedIssue): Promise<void>;
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
	/** Posts a comment; returns its id (an epic's progress comment is edited by it). */
	comment(issueId: string, body: string): Promise<string>;
	attachLink(issueId: string, url: string, title: string): Promise<void>;
	removeLabel(issueId: string, label: string): Promise<void>;
	/** Sub-issues, relations and an edited progress comment, for epics. */
	readonly epics: EpicTracker;
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

/**
 * Refuses a sub-issue marker that is not one whole, non-empty HTML comment: an empty or partial
 * one would match sub-issues of other epics, and findSubIssue would reuse them.
 */
export function checkMarker(marker: string): void {
	const inner = /^<!--((?:(?!-->)[\s\S])*)-->$/.exec(marker)?.[1];
	if (!inner?.trim())
		throw new TrackerError(
			`a sub-issue marker must be one non-empty HTML comment like "<!-- lisa-epic … -->", got ${JSON.stringify(marker)}`,
			false,
		);
}

/** Whether `body` carries `marker` (EpicTracker.findSubIssue). */
export function carriesMarker(body: string | null | undefined, marker: string): boolean {
	checkMarker(marker);
	return (body ?? "").includes(marker);
}

/** Checks a sub-issue before it is created: its body must carry its marker, or it is never found again. */
export function checkSubIssue(input: SubIssueInput): void {
	checkMarker(input.marker);
	if (!input.body.includes(input.marker))
		throw new TrackerError(
			`the body of sub-issue "${input.title}" does not carry its marker`,
			false,
		);
}
