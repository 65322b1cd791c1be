import type { LisaConfig, SourceConfig, SourceName } from "../config/schema";
import { sameName } from "./workflow";

// Whether an issue a webhook asked for still waits for Lisa, decided from the tracker's present
// answer rather than the delivery: a replayed or late delivery must not restart an issue Lisa is
// working on or has finished. Pure.

/** What the tracker says about the issue now (see TrackerIssue). */
export interface IssueNow {
	labels: string[];
	state: string;
	closed: boolean;
}

/** Agent session statuses in which the session still waits for its agent. */
const LIVE_SESSION_STATUSES: readonly string[] = ["pending", "active", "awaitingInput"];

/** GitHub's own issue states; its other workflow states are status labels. */
const GITHUB_STATES = ["open", "closed"];

/** Whether the issue is in the workflow state the config calls `name`. */
function inState(source: SourceName, issue: IssueNow, name: string): boolean {
	if (sameName(issue.state, name)) return true;
	return (
		source === "github" &&
		!GITHUB_STATES.some((s) => sameName(s, name)) &&
		issue.labels.some((l) => sameName(l, name))
	);
}

/** The labels of epics (config `epic`, docs/epics.md › Epics). */
export type EpicLabels = Pick<LisaConfig["epic"], "label" | "needs_spec_label">;

/** An issue carrying the epic label is an epic, whatever other labels it carries (`lisa` too). */
export function isEpic(labels: string[], epic: EpicLabels): boolean {
	return labels.some((l) => sameName(l, epic.label));
}

/**
 * Why an epic waits: it carries the needs-spec label Lisa set with its questions, until someone
 * answers them in the description and removes the label. Undefined when it does not wait.
 */
export function whyEpicWaits(labels: string[], epic: EpicLabels): string | undefined {
	if (!isEpic(labels, epic) || !labels.some((l) => sameName(l, epic.needs_spec_label)))
		return undefined;
	return `it carries "${epic.needs_spec_label}": answer the questions in its description, then remove the label`;
}

/**
 * Why the issue no longer qualifies for a run, or undefined when it does: it must carry the trigger
 * label or, given `epic`, the epic label (on Trello, being in pick_from is enough: moving a card
 * there is a trigger by itself), must not be closed, must not be an epic waiting for its spec, and
 * must not be in a state Lisa itself moves issues to (in_progress, done, merged), unless that state
 * is also pick_from.
 */
export function whyNotQualifying(
	source: SourceName,
	issue: IssueNow,
	sc: SourceConfig,
	epic?: EpicLabels,
): string | undefined {
	const labelled =
		issue.labels.some((l) => sameName(l, sc.label)) || (!!epic && isEpic(issue.labels, epic));
	const label = epic ? `the label "${sc.label}" or "${epic.label}"` : `the label "${sc.label}"`;
	if (source === "trello" && !labelled && !inState(source, issue, sc.pick_from))
		return `it does not carry ${label} and is not in "${sc.pick_from}"`;
	if (source !== "trello" && !labelled) return `it does not carry ${label}`;
	if (issue.closed) return `it is closed${issue.state ? ` ("${issue.state}")` : ""}`;
	const waits = epic && whyEpicWaits(issue.labels, epic);
	if (waits) return waits;
	const lisas = [sc.in_progress, sc.done, sc.merged].filter(
		(n): n is string => !!n && !sameName(n, sc.pick_from),
	);
	const current = lisas.find((name) => inState(source, issue, name));
	if (current) return `it is in "${current}", where Lisa moves the issues it works on`;
	return undefined;
}

/** Why a run's agent session no longer waits for it, or undefined when it does. */
export function whySessionNotLive(session: {
	status: string;
	dismissed: boolean;
}): string | undefined {
	if (session.dismissed) return "its agent session was dismissed";
	if (!LIVE_SESSION_STATUSES.includes(session.status))
		return `its agent session is ${session.status}`;
	return undefined;
}
