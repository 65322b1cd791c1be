import { MARKER_PATTERN } from "../../domain/comments";
import { type EpicLabels, whyEpicWaits } from "../../domain/qualify";
import { sameName } from "../../domain/workflow";

// Linear trigger rules (docs/trackers.md › Using it with Linear). Pure: decides from the webhook
// payload alone.

export interface LinearIssueEvent {
	type?: string;
	action?: string;
	actor?: { id?: string; type?: string; name?: string } | null;
	data?: {
		id?: string;
		identifier?: string;
		labelIds?: string[];
		labels?: { id: string; name: string }[];
		state?: { id?: string; name?: string; type?: string };
		team?: { id?: string; key?: string; name?: string };
		/** Comment events. */
		body?: string;
	};
	updatedFrom?: Record<string, unknown> & { labelIds?: string[]; stateId?: string };
}

export interface TriggerRules {
	label: string;
	pickFrom: string;
	/** Team key, name or id; events from other teams are ignored. */
	team?: string;
	/** The epic label also triggers, as an epic run (docs/epics.md › Epics). */
	epic?: EpicLabels;
}

export type Verdict =
	| {
			trigger: true;
			issueId: string;
			issueKey?: string;
			actorId?: string;
			why: string;
			/** The issue carries the epic label: plan it into sub-issues. */
			kind?: "epic";
	  }
	| { trigger: false; reason: string };

export function linearIssueVerdict(event: LinearIssueEvent, rules: TriggerRules): Verdict {
	if (event.type === "Comment" && MARKER_PATTERN.test(event.data?.body ?? ""))
		return { trigger: false, reason: "Lisa's own comment (it carries Lisa's marker)" };
	if (event.type !== "Issue")
		return { trigger: false, reason: `${event.type ?? "unknown"} events are not handled` };
	const data = event.data;
	if (!data?.id) return { trigger: false, reason: "payload has no issue id" };
	if (event.action !== "create" && event.action !== "update")
		return { trigger: false, reason: `issue ${event.action ?? "event"} is not a trigger` };
	const team = data.team;
	if (rules.team && team && ![team.key, team.name, team.id].some((t) => sameName(t, rules.team)))
		return {
			trigger: false,
			reason: `issue belongs to team ${team.key ?? team.name}, not ${rules.team}`,
		};

	// A label counts when the issue carries it now (labelIds, when the payload has them).
	const carried = (name: string) => {
		const id = data.labels?.find((l) => sameName(l.name, name))?.id;
		return id !== undefined && (data.labelIds ?? [id]).includes(id) ? id : undefined;
	};
	const epicId = rules.epic && carried(rules.epic.label);
	const labelled = carried(rules.label) !== undefined || epicId !== undefined;
	const label = epicId && rules.epic ? rules.epic.label : rules.label;
	if (epicId && rules.epic) {
		const names = (data.labels ?? []).filter((l) => carried(l.name)).map((l) => l.name);
		const waits = whyEpicWaits(names, rules.epic);
		if (waits) return { trigger: false, reason: `the epic waits: ${waits}` };
	}
	const hit = (why: string): Verdict => ({
		trigger: true,
		issueId: data.id as string,
		issueKey: data.identifier,
		actorId: event.actor?.id ?? undefined,
		why,
		...(epicId ? { kind: "epic" as const } : {}),
	});

	if (event.action === "create")
		return labelled
			? hit(`created with label "${label}"`)
			: { trigger: false, reason: `created without label "${rules.label}"` };

	const before = event.updatedFrom ?? {};
	const added = (id: string | undefined) =>
		id !== undefined && Array.isArray(before.labelIds) && !before.labelIds.includes(id);
	if (added(carried(rules.label))) return hit(`label "${rules.label}" added`);
	if (added(epicId)) return hit(`label "${label}" added`);
	if ("stateId" in before && sameName(data.state?.name, rules.pickFrom)) {
		return labelled
			? hit(`moved to "${rules.pickFrom}" with label "${label}"`)
			: { trigger: false, reason: `moved to "${rules.pickFrom}" without label "${rules.label}"` };
	}
	return {
		trigger: false,
		reason: `update is neither label "${rules.label}" added nor a move into "${rules.pickFrom}"`,
	};
}
