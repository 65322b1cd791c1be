import type { SourceName } from "../config/schema";

// The tracker port: what the pipeline needs from Linear, Trello or GitHub Issues.

export interface TrackerIssue {
	id: string;
	key?: string;
	title: string;
	description: string;
	url?: string;
	teamId?: string;
}

export interface Tracker {
	readonly source: SourceName;
	/** By id, key (ENG-123) or URL. Throws TrackerError (not transient) when it does not exist. */
	fetchIssue(ref: string): Promise<TrackerIssue>;
	/** Moves the issue to the workflow state / list / status label with this name. */
	moveTo(issueId: string, stateName: string): Promise<void>;
	comment(issueId: string, body: string): Promise<void>;
	attachLink(issueId: string, url: string, title: string): Promise<void>;
	removeLabel(issueId: string, label: string): Promise<void>;
	/** The id of the actor Lisa acts as, so its own changes never trigger a run. */
	selfActorId(): Promise<string | undefined>;
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
