/** Mutation resolvers of the Linear double: they change the store and record what they got. */
import { randomUUID } from "node:crypto";
import { invalidInput, notFound, notImplemented } from "./errors";
import {
	type Args,
	type Context,
	must,
	payload,
	requireIssue,
	requireSession,
	str,
	type TypeResolvers,
} from "./resolve-helpers";
import type {
	AgentActivityRecord,
	DoubleAgentSession,
	DoubleAttachment,
	DoubleIssue,
	IssueRelationType,
} from "./state";

// ---- issue mutations ----

function checkLabel(ctx: Context, issue: DoubleIssue, labelId: string): string {
	const label = ctx.store.findLabelById(labelId);
	if (!label) throw notFound("IssueLabel", "labelIds contained an entry that could not be found.");
	if (label.teamId !== null && label.teamId !== issue.teamId)
		throw invalidInput(
			`Label ${label.name} belongs to another team`,
			"The label does not belong to the issue's team.",
		);
	return label.id;
}

function moveToTeam(ctx: Context, issue: DoubleIssue, teamId: string, keepState: boolean): void {
	const { store } = ctx;
	const team = must(store.findTeam(teamId), "Team");
	if (team.id === issue.teamId) return;
	const old = store.findState(issue.stateId);
	issue.previousIdentifiers.push(issue.identifier);
	team.lastIssueNumber += 1;
	issue.teamId = team.id;
	issue.number = team.lastIssueNumber;
	issue.identifier = `${team.key}-${team.lastIssueNumber}`;
	issue.labelIds = issue.labelIds.filter((id) => store.findLabelById(id)?.teamId === null);
	if (!keepState) {
		const states = store.teamStates(team.id);
		const next =
			states.find((s) => s.name === old?.name) ??
			states.find((s) => s.type === old?.type) ??
			store.defaultState(team.id);
		if (next) issue.stateId = next.id;
	}
}

/** Apply an IssueUpdateInput (or the optional parts of an IssueCreateInput). */
function applyIssueInput(ctx: Context, issue: DoubleIssue, input: Args): void {
	const { store } = ctx;
	const at = store.iso();
	if (typeof input.teamId === "string") moveToTeam(ctx, issue, input.teamId, !!input.stateId);
	if (typeof input.title === "string") issue.title = input.title;
	if (input.description !== undefined) issue.description = (input.description as string) ?? null;
	if (input.priority !== undefined && input.priority !== null) {
		const p = Number(input.priority);
		if (!Number.isInteger(p) || p < 0 || p > 4)
			throw invalidInput("priority must be between 0 and 4", "Invalid priority.");
		issue.priority = p;
	}
	if (input.estimate !== undefined) issue.estimate = (input.estimate as number | null) ?? null;
	if (input.dueDate !== undefined) issue.dueDate = (input.dueDate as string | null) ?? null;
	if (typeof input.stateId === "string") {
		const state = must(store.findState(input.stateId), "WorkflowState");
		if (state.teamId !== issue.teamId)
			throw invalidInput(
				"Workflow state does not belong to the issue's team",
				"The workflow state does not belong to the issue's team.",
			);
		store.stampStateChange(issue, state, at);
	}
	if (Array.isArray(input.labelIds))
		issue.labelIds = [...new Set(input.labelIds.map((id) => checkLabel(ctx, issue, str(id))))];
	if (Array.isArray(input.addedLabelIds))
		for (const id of input.addedLabelIds) {
			const labelId = checkLabel(ctx, issue, str(id));
			if (!issue.labelIds.includes(labelId)) issue.labelIds.push(labelId);
		}
	if (Array.isArray(input.removedLabelIds))
		issue.labelIds = issue.labelIds.filter(
			(id) => !(input.removedLabelIds as unknown[]).includes(id),
		);
	if (input.assigneeId !== undefined)
		issue.assigneeId = input.assigneeId
			? must(store.findUser(str(input.assigneeId)), "User").id
			: null;
	if (input.projectId !== undefined)
		issue.projectId = input.projectId
			? must(store.findProject(str(input.projectId)), "Project").id
			: null;
	if (input.parentId !== undefined)
		issue.parentId = input.parentId ? requireIssue(ctx, input.parentId).id : null;
	store.refreshDerived(issue);
	issue.updatedAt = at;
}

function recordIssueUpdate(
	ctx: Context,
	issue: DoubleIssue,
	mutation: "issueUpdate" | "issueAddLabel" | "issueRemoveLabel",
	input: Args,
): void {
	ctx.store.state.issueUpdates.push({
		issueId: issue.id,
		identifier: issue.identifier,
		mutation,
		input: structuredClone(input),
		at: ctx.store.iso(),
	});
}

// ---- attachments and agent activities ----

function upsertAttachment(
	ctx: Context,
	issueId: unknown,
	fields: { url: string; title: string; subtitle?: unknown; metadata?: unknown; iconUrl?: unknown },
	id?: unknown,
): DoubleAttachment {
	const { store } = ctx;
	const issue = requireIssue(ctx, issueId);
	const at = store.iso();
	// Linear keeps one attachment per URL and issue: attaching the same URL again updates it.
	let attachment = store.state.attachments.find(
		(a) => a.issueId === issue.id && a.url === fields.url,
	);
	if (!attachment) {
		attachment = {
			id: typeof id === "string" ? id : randomUUID(),
			issueId: issue.id,
			url: fields.url,
			title: fields.title,
			subtitle: null,
			metadata: {},
			iconUrl: null,
			creatorId: store.state.viewer.id,
			createdAt: at,
			updatedAt: at,
		};
		store.state.attachments.push(attachment);
	}
	attachment.title = fields.title;
	if (fields.subtitle !== undefined) attachment.subtitle = (fields.subtitle as string) ?? null;
	if (fields.metadata) attachment.metadata = fields.metadata as Record<string, unknown>;
	if (fields.iconUrl !== undefined) attachment.iconUrl = (fields.iconUrl as string) ?? null;
	attachment.updatedAt = at;
	return attachment;
}

const ACTIVITY_TYPES = new Set(["thought", "action", "elicitation", "response", "error"]);

function checkActivityContent(content: unknown): AgentActivityRecord["content"] {
	const c = content as Record<string, unknown> | null;
	const type = c?.type;
	if (typeof type !== "string" || !ACTIVITY_TYPES.has(type))
		throw invalidInput(
			`content.type must be one of ${[...ACTIVITY_TYPES].join(", ")} (got ${String(type)})`,
		);
	if (type === "action") {
		if (typeof c?.action !== "string" || typeof c?.parameter !== "string")
			throw invalidInput("action content needs string action and parameter");
	} else if (typeof c?.body !== "string") {
		throw invalidInput(`${type} content needs a string body`);
	}
	return { ...(c as Record<string, unknown>), type };
}

const STATUS_AFTER: Record<string, DoubleAgentSession["status"]> = {
	thought: "active",
	action: "active",
	elicitation: "awaitingInput",
	response: "complete",
	error: "error",
};

export const Mutation: TypeResolvers<unknown> = {
	issueCreate: (_s, a, ctx) => {
		const input = a.input as Args;
		const team = must(ctx.store.findTeam(str(input.teamId)), "Team");
		const issue = ctx.store.addIssue({
			teamKey: team.key,
			title: str(input.title),
			...(typeof input.id === "string" ? { id: input.id } : {}),
		});
		issue.creatorId = ctx.store.state.viewer.id;
		const { teamId: _team, title: _title, id: _id, ...rest } = input;
		applyIssueInput(ctx, issue, rest);
		return payload(ctx, "issue", issue);
	},
	issueUpdate: (_s, a, ctx) => {
		const issue = requireIssue(ctx, a.id);
		const input = a.input as Args;
		recordIssueUpdate(ctx, issue, "issueUpdate", input);
		applyIssueInput(ctx, issue, input);
		return payload(ctx, "issue", issue);
	},
	issueAddLabel: (_s, a, ctx) => {
		const issue = requireIssue(ctx, a.id);
		recordIssueUpdate(ctx, issue, "issueAddLabel", { labelId: a.labelId });
		applyIssueInput(ctx, issue, { addedLabelIds: [a.labelId] });
		return payload(ctx, "issue", issue);
	},
	issueRemoveLabel: (_s, a, ctx) => {
		const issue = requireIssue(ctx, a.id);
		recordIssueUpdate(ctx, issue, "issueRemoveLabel", { labelId: a.labelId });
		applyIssueInput(ctx, issue, { removedLabelIds: [a.labelId] });
		return payload(ctx, "issue", issue);
	},
	issueLabelCreate: (_s, a, ctx) => {
		const input = a.input as Args;
		const name = typeof input.name === "string" ? input.name.trim() : "";
		if (!name) throw invalidInput("name must not be empty", "Label name can't be empty.");
		const teamId = input.teamId ? must(ctx.store.findTeam(str(input.teamId)), "Team").id : null;
		// Linear refuses a second label of the same name in the same team (or workspace).
		const taken = ctx.store.state.labels.some(
			(l) => l.teamId === teamId && l.name.toLowerCase() === name.toLowerCase(),
		);
		if (taken)
			throw invalidInput(`Duplicate label name: ${name}`, "A label with this name already exists.");
		const label = ctx.store.addLabel(
			teamId,
			name,
			typeof input.color === "string" ? input.color : undefined,
		);
		if (typeof input.id === "string") label.id = input.id;
		return payload(ctx, "issueLabel", label);
	},
	issueRelationCreate: (_s, a, ctx) => {
		const input = a.input as Args;
		const from = requireIssue(ctx, input.issueId);
		const to = requireIssue(ctx, input.relatedIssueId);
		const relation = ctx.store.addRelation(from.id, input.type as IssueRelationType, to.id);
		if (typeof input.id === "string") relation.id = input.id;
		return payload(ctx, "issueRelation", relation);
	},
	commentCreate: (_s, a, ctx) => {
		const input = a.input as Args;
		if (!input.issueId) throw notImplemented("commentCreate without issueId");
		const issue = requireIssue(ctx, input.issueId);
		if (typeof input.body !== "string" || input.body.trim() === "")
			throw invalidInput("body must not be empty", "Comment body can't be empty.");
		const parentId = input.parentId
			? must(ctx.store.findComment(str(input.parentId)), "Comment").id
			: null;
		const comment = ctx.store.addComment(issue.id, input.body, { parentId });
		if (typeof input.id === "string") comment.id = input.id;
		return payload(ctx, "comment", comment);
	},
	commentUpdate: (_s, a, ctx) => {
		const comment = must(ctx.store.findComment(str(a.id)), "Comment");
		const input = a.input as Args;
		if (typeof input.body === "string") {
			comment.body = input.body;
			if (!a.skipEditedAt) comment.editedAt = ctx.store.iso();
		}
		comment.updatedAt = ctx.store.iso();
		return payload(ctx, "comment", comment);
	},
	attachmentCreate: (_s, a, ctx) => {
		const input = a.input as Args;
		const attachment = upsertAttachment(
			ctx,
			input.issueId,
			{
				url: str(input.url),
				title: str(input.title),
				subtitle: input.subtitle,
				metadata: input.metadata,
				iconUrl: input.iconUrl,
			},
			input.id,
		);
		if (typeof input.commentBody === "string")
			ctx.store.addComment(attachment.issueId, input.commentBody);
		return payload(ctx, "attachment", attachment);
	},
	attachmentLinkURL: (_s, a, ctx) => {
		const url = str(a.url);
		const title = typeof a.title === "string" ? a.title : url;
		const attachment = upsertAttachment(
			ctx,
			a.issueId,
			{ url, title, iconUrl: a.displayIconUrl },
			a.id,
		);
		return payload(ctx, "attachment", attachment);
	},
	agentActivityCreate: (_s, a, ctx) => {
		const { store } = ctx;
		const input = a.input as Args;
		const session = requireSession(ctx, input.agentSessionId);
		const content = checkActivityContent(input.content);
		const at = store.iso();
		const activity: AgentActivityRecord = {
			id: typeof input.id === "string" ? input.id : randomUUID(),
			agentSessionId: session.id,
			content,
			signal: (input.signal as string | null | undefined) ?? null,
			signalMetadata: input.signalMetadata ?? null,
			ephemeral: input.ephemeral === true,
			userId: store.state.viewer.id,
			input: structuredClone(input),
			createdAt: at,
			updatedAt: at,
		};
		store.state.agentActivities.push(activity);
		const status = STATUS_AFTER[content.type];
		if (status) session.status = status;
		session.startedAt ??= at;
		if (status === "complete" || status === "error") session.endedAt = at;
		session.updatedAt = at;
		return payload(ctx, "agentActivity", activity);
	},
	agentSessionUpdate: (_s, a, ctx) => {
		const { store } = ctx;
		const session = requireSession(ctx, a.id);
		const input = a.input as Args;
		const at = store.iso();
		store.state.agentSessionUpdates.push({
			agentSessionId: session.id,
			input: structuredClone(input),
			at,
		});
		type Link = { label: string; url: string };
		if (input.plan !== undefined) session.plan = input.plan;
		if (Array.isArray(input.externalUrls))
			session.externalUrls = [...(input.externalUrls as Link[])];
		if (Array.isArray(input.addedExternalUrls))
			for (const link of input.addedExternalUrls as Link[]) {
				session.externalUrls = session.externalUrls.filter((l) => l.url !== link.url);
				session.externalUrls.push(link);
			}
		if (Array.isArray(input.removedExternalUrls)) {
			const removed = input.removedExternalUrls as string[];
			session.externalUrls = session.externalUrls.filter((l) => !removed.includes(l.url));
		}
		if (input.externalLink !== undefined)
			session.externalLink = (input.externalLink as string) ?? null;
		if (input.dismissedAt !== undefined)
			session.dismissedAt = (input.dismissedAt as string) ?? null;
		session.updatedAt = at;
		return payload(ctx, "agentSession", session);
	},
};
