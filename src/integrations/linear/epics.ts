import { IssueRelationType, type LinearClient } from "@linear/sdk";
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
import { call, notFoundAs, stateNamed } from "./call";

// Epics on Linear (docs/epics.md › Epics): native sub-issues (`parentId`), `blocks` relations, an
// edited comment.

/** The epic's team with its workflow states, and the sub-issues created so far. */
const EPIC = `query LisaEpic($id: String!) {
  issue(id: $id) {
    id identifier
    team { id states(first: 100) { nodes { id name } } }
    children(first: 250) { nodes { id identifier url description } }
  }
}`;

interface EpicNode {
	id: string;
	identifier: string;
	team?: { id: string; states: { nodes: { id: string; name: string }[] } } | null;
	children: {
		nodes: { id: string; identifier: string; url: string; description?: string | null }[];
	};
}

const CREATE = `mutation LisaSubIssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { id identifier url } }
}`;

const RELATIONS = `query LisaBlocks($id: String!) {
  issue(id: $id) { id relations(first: 250) { nodes { type relatedIssue { id identifier } } } }
}`;

interface RelationsNode {
	id: string;
	relations: {
		nodes: { type: string; relatedIssue?: { id: string; identifier: string } | null }[];
	};
}

/** The issue's team, its labels, and the labels usable in the team (its own and the workspace's). */
const LABELS = `query LisaLabels($id: String!, $name: String!) {
  issue(id: $id) { id team { id } labels(first: 250) { nodes { id name } } }
  issueLabels(filter: { name: { eqIgnoreCase: $name } }, first: 50) {
    nodes { id name team { id } }
  }
}`;

interface LabelsData {
	issue: {
		id: string;
		team?: { id: string } | null;
		labels: { nodes: { id: string; name: string }[] };
	};
	issueLabels: { nodes: { id: string; name: string; team?: { id: string } | null }[] };
}

const toCreated = (n: { id: string; identifier: string; url: string }): CreatedIssue => ({
	id: n.id,
	key: n.identifier,
	url: n.url,
});

export function linearEpics(client: LinearClient): EpicTracker {
	const raw = client.client;
	const epic = async (epicId: string): Promise<EpicNode> => {
		const res = await raw
			.rawRequest<{ issue: EpicNode }, { id: string }>(EPIC, { id: epicId })
			.catch(notFoundAs(`Linear issue ${epicId}`));
		if (!res.data?.issue) throw new TrackerError(`Linear issue ${epicId} was not found`, false);
		return res.data.issue;
	};

	return {
		findSubIssue: (epicId, marker) =>
			call(`finding the sub-issue of ${epicId}`, async () => {
				checkMarker(marker);
				const child = (await epic(epicId)).children.nodes.find((c) =>
					carriesMarker(c.description, marker),
				);
				return child ? toCreated(child) : undefined;
			}),

		createSubIssue: (epicId, input: SubIssueInput) =>
			call(`creating a sub-issue of ${epicId}`, async () => {
				checkSubIssue(input);
				const parent = await epic(epicId);
				if (!parent.team) throw new TrackerError(`Linear issue ${epicId} has no team`, false);
				const state = stateNamed(parent.team.states.nodes, input.state, parent.identifier);
				const res = await raw.rawRequest<
					{
						issueCreate: {
							success: boolean;
							issue?: { id: string; identifier: string; url: string };
						};
					},
					{ input: Record<string, unknown> }
				>(CREATE, {
					input: {
						teamId: parent.team.id,
						parentId: parent.id,
						stateId: state.id,
						title: input.title,
						description: input.body,
					},
				});
				const created = res.data?.issueCreate;
				if (!created?.success || !created.issue)
					throw new TrackerError("Linear refused the sub-issue", true);
				return toCreated(created.issue);
			}),

		addBlocker: (blockedId, blockerId) =>
			call(`recording that ${blockerId} blocks ${blockedId}`, async () => {
				const res = await raw
					.rawRequest<{ issue: RelationsNode }, { id: string }>(RELATIONS, { id: blockerId })
					.catch(notFoundAs(`Linear issue ${blockerId}`));
				const blocker = res.data?.issue;
				if (!blocker) throw new TrackerError(`Linear issue ${blockerId} was not found`, false);
				const exists = blocker.relations.nodes.some(
					(r) =>
						r.type === "blocks" &&
						(r.relatedIssue?.id === blockedId || r.relatedIssue?.identifier === blockedId),
				);
				if (exists) return;
				const result = await client.createIssueRelation({
					issueId: blocker.id,
					relatedIssueId: blockedId,
					type: IssueRelationType.Blocks,
				});
				if (!result.success) throw new TrackerError("Linear refused the relation", true);
			}),

		editComment: (issueId, commentId, body) =>
			call(`editing comment ${commentId} on ${issueId}`, async () => {
				const result = await client
					.updateComment(commentId, { body })
					.catch(notFoundAs(`Linear comment ${commentId}`));
				if (!result.success) throw new TrackerError("Linear refused the comment edit", true);
			}),

		addLabel: (issueId, label) =>
			call(`adding label "${label}" to ${issueId}`, async () => {
				const res = await raw
					.rawRequest<LabelsData, { id: string; name: string }>(LABELS, {
						id: issueId,
						name: label,
					})
					.catch(notFoundAs(`Linear issue ${issueId}`));
				const issue = res.data?.issue;
				if (!issue) throw new TrackerError(`Linear issue ${issueId} was not found`, false);
				if (issue.labels.nodes.some((l) => sameName(l.name, label))) return;
				const teamId = issue.team?.id;
				// The team's own label first, then a workspace label (as Linear offers them in the team).
				const usable = (res.data?.issueLabels.nodes ?? []).filter((l) => sameName(l.name, label));
				let labelId =
					usable.find((l) => l.team?.id === teamId)?.id ?? usable.find((l) => !l.team)?.id;
				if (!labelId) {
					const made = await client.createIssueLabel({
						name: label,
						...(teamId ? { teamId } : {}),
					});
					labelId = made.issueLabelId;
					if (!made.success || !labelId) throw new TrackerError("Linear refused the label", true);
				}
				const result = await client.issueAddLabel(issue.id, labelId);
				if (!result.success) throw new TrackerError("Linear refused the label change", true);
			}),
	};
}
