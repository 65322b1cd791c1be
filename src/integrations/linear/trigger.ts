import { MARKER_PATTERN } from "../../domain/comments";
import { sameName } from "../../domain/workflow";

// Linear trigger rules (README › Using it with Linear). Pure: decides from the webhook payload alone.

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
}

export type Verdict =
	| { trigger: true; issueId: string; issueKey?: string; actorId?: string; why: string }
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

	const labelId = data.labels?.find((l) => sameName(l.name, rules.label))?.id;
	const labelled = labelId !== undefined && (data.labelIds ?? [labelId]).includes(labelId);
	const hit = (why: string): Verdict => ({
		trigger: true,
		issueId: data.id as string,
		issueKey: data.identifier,
		actorId: event.actor?.id ?? undefined,
		why,
	});

	if (event.action === "create")
		return labelled
			? hit(`created with label "${rules.label}"`)
			: { trigger: false, reason: `created without label "${rules.label}"` };

	const before = event.updatedFrom ?? {};
	if (labelled && Array.isArray(before.labelIds) && !before.labelIds.includes(labelId))
		return hit(`label "${rules.label}" added`);
	if ("stateId" in before && sameName(data.state?.name, rules.pickFrom)) {
		return labelled
			? hit(`moved to "${rules.pickFrom}" with label "${rules.label}"`)
			: { trigger: false, reason: `moved to "${rules.pickFrom}" without label "${rules.label}"` };
	}
	return {
		trigger: false,
		reason: `update is neither label "${rules.label}" added nor a move into "${rules.pickFrom}"`,
	};
}
