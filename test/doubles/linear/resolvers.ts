/**
 * Resolvers of the Linear double: root queries, plus the object fields that need the store
 * (relations, connections, derived values); mutations live in mutations.ts. Every other field
 * falls back to the record's own property or a type-appropriate default (see execute.ts).
 */
import { Mutation } from "./mutations";
import {
	attachmentView,
	commentView,
	connect,
	issueView,
	labelsOf,
	labelView,
	must,
	projectView,
	type Resolvers,
	requireIssue,
	requireSession,
	stateView,
	str,
	type TypeResolvers,
	teamView,
	userView,
} from "./resolve-helpers";
import {
	type AgentActivityRecord,
	type DoubleAgentSession,
	type DoubleAttachment,
	type DoubleComment,
	type DoubleIssue,
	type DoubleLabel,
	type DoubleProject,
	type DoubleRelation,
	type DoubleTeam,
	type DoubleUser,
	type DoubleWorkflowState,
	PRIORITY_LABELS,
} from "./state";

export type { Context, Resolvers } from "./resolve-helpers";

const Query: TypeResolvers<unknown> = {
	viewer: (_s, _a, { store }) => store.state.viewer,
	organization: (_s, _a, { store }) => store.state.organization,
	user: (_s, a, { store }) => must(store.findUser(str(a.id)), "User"),
	users: (_s, a, ctx) =>
		connect(ctx, ctx.store.allUsers(), a, "UserFilter", (u) => userView(u) ?? {}),
	issue: (_s, a, ctx) => requireIssue(ctx, a.id),
	issues: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.issues, a, "IssueFilter", (i) => issueView(ctx.store, i)),
	issueVcsBranchSearch: (_s, a, { store }) => {
		const branch = str(a.branchName).toLowerCase();
		return (
			store.state.issues.find((i) => i.branchName.toLowerCase() === branch) ??
			store.state.issues.find((i) => branch.includes(i.identifier.toLowerCase())) ??
			null
		);
	},
	issueRelation: (_s, a, { store }) =>
		must(
			store.state.relations.find((r) => r.id === a.id),
			"IssueRelation",
		),
	team: (_s, a, { store }) => must(store.findTeam(str(a.id)), "Team"),
	teams: (_s, a, ctx) => connect(ctx, ctx.store.state.teams, a, "TeamFilter", teamView),
	workflowState: (_s, a, { store }) => must(store.findState(str(a.id)), "WorkflowState"),
	workflowStates: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.states, a, "WorkflowStateFilter", (s) => stateView(ctx.store, s)),
	issueLabel: (_s, a, { store }) => must(store.findLabelById(str(a.id)), "IssueLabel"),
	issueLabels: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.labels, a, "IssueLabelFilter", (l) => labelView(ctx.store, l)),
	project: (_s, a, { store }) => must(store.findProject(str(a.id)), "Project"),
	projects: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.projects, a, "ProjectFilter", (p) => projectView(p) ?? {}),
	comment: (_s, a, { store }) => must(store.findComment(str(a.id)), "Comment"),
	comments: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.comments, a, "CommentFilter", (c) => commentView(ctx.store, c)),
	attachment: (_s, a, { store }) => must(store.findAttachment(str(a.id)), "Attachment"),
	attachments: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.attachments, a, "AttachmentFilter", (x) =>
			attachmentView(ctx.store, x),
		),
	attachmentsForURL: (_s, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.attachments.filter((x) => x.url === a.url),
			a,
			"AttachmentFilter",
		),
	agentSession: (_s, a, ctx) => requireSession(ctx, a.id),
	agentSessions: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.agentSessions, a, "AgentSessionFilter"),
	agentActivity: (_s, a, { store }) =>
		must(
			store.state.agentActivities.find((x) => x.id === a.id),
			"AgentActivity",
		),
	agentActivities: (_s, a, ctx) =>
		connect(ctx, ctx.store.state.agentActivities, a, "AgentActivityFilter"),
};

const Issue: TypeResolvers<DoubleIssue> = {
	team: (i, _a, { store }) => store.findTeam(i.teamId),
	state: (i, _a, { store }) => store.findState(i.stateId),
	labels: (i, a, ctx) =>
		connect(ctx, labelsOf(ctx.store, i), a, "IssueLabelFilter", (l) => labelView(ctx.store, l)),
	priorityLabel: (i) => PRIORITY_LABELS[i.priority] ?? "No priority",
	project: (i, _a, { store }) => (i.projectId ? store.findProject(i.projectId) : null),
	assignee: (i, _a, { store }) => (i.assigneeId ? store.findUser(i.assigneeId) : null),
	creator: (i, _a, { store }) => (i.creatorId ? store.findUser(i.creatorId) : null),
	parent: (i, _a, { store }) => (i.parentId ? store.findIssue(i.parentId) : null),
	children: (i, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((c) => c.parentId === i.id),
			a,
			"IssueFilter",
			(c) => issueView(ctx.store, c),
		),
	comments: (i, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.comments.filter((c) => c.issueId === i.id),
			a,
			"CommentFilter",
			(c) => commentView(ctx.store, c),
		),
	attachments: (i, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.attachments.filter((x) => x.issueId === i.id),
			a,
			"AttachmentFilter",
			(x) => attachmentView(ctx.store, x),
		),
	relations: (i, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.relations.filter((r) => r.issueId === i.id),
			a,
			"IssueRelationFilter",
		),
	inverseRelations: (i, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.relations.filter((r) => r.relatedIssueId === i.id),
			a,
			"IssueRelationFilter",
		),
	agentSessions: (i, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.agentSessions.filter((s) => s.issueId === i.id),
			a,
			"AgentSessionFilter",
		),
};

const Team: TypeResolvers<DoubleTeam> = {
	displayName: (t) => t.name,
	timezone: () => "UTC",
	organization: (_t, _a, { store }) => store.state.organization,
	states: (t, a, ctx) =>
		connect(ctx, ctx.store.teamStates(t.id), a, "WorkflowStateFilter", (s) =>
			stateView(ctx.store, s),
		),
	labels: (t, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.labels.filter((l) => l.teamId === t.id),
			a,
			"IssueLabelFilter",
			(l) => labelView(ctx.store, l),
		),
	issues: (t, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((i) => i.teamId === t.id),
			a,
			"IssueFilter",
			(i) => issueView(ctx.store, i),
		),
	issueCount: (t, _a, { store }) => store.state.issues.filter((i) => i.teamId === t.id).length,
	// Deactivated users only when asked for, as Linear does.
	members: (t, a, ctx) =>
		connect(
			ctx,
			ctx.store
				.allUsers()
				.filter((u) => ctx.store.isMember(u, t.id) && (u.active || a.includeDisabled === true)),
			a,
			"UserFilter",
			(u) => userView(u) ?? {},
		),
	defaultIssueState: (t, _a, { store }) => store.defaultState(t.id) ?? null,
	triageEnabled: (t, _a, { store }) => store.teamStates(t.id).some((s) => s.type === "triage"),
	triageIssueState: (t, _a, { store }) =>
		store.teamStates(t.id).find((s) => s.type === "triage") ?? null,
	markedAsDuplicateWorkflowState: (t, _a, { store }) =>
		store.teamStates(t.id).find((s) => s.type === "canceled" && /duplicate/i.test(s.name)) ?? null,
};

const WorkflowState: TypeResolvers<DoubleWorkflowState> = {
	team: (s, _a, { store }) => store.findTeam(s.teamId),
	issues: (s, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((i) => i.stateId === s.id),
			a,
			"IssueFilter",
			(i) => issueView(ctx.store, i),
		),
};

const IssueLabel: TypeResolvers<DoubleLabel> = {
	team: (l, _a, { store }) => (l.teamId ? store.findTeam(l.teamId) : null),
	organization: (_l, _a, { store }) => store.state.organization,
	issues: (l, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((i) => i.labelIds.includes(l.id)),
			a,
			"IssueFilter",
			(i) => issueView(ctx.store, i),
		),
};

const User: TypeResolvers<DoubleUser> = {
	isMe: (u, _a, { store }) => u.id === store.state.viewer.id,
	initials: (u) =>
		u.name
			.split(/\s+/)
			.map((w) => w[0] ?? "")
			.join("")
			.slice(0, 2)
			.toUpperCase(),
	url: (u, _a, { store }) =>
		`https://linear.app/${store.state.organization.urlKey}/profiles/${u.displayName}`,
	isAssignable: () => true,
	isMentionable: () => true,
	organization: (_u, _a, { store }) => store.state.organization,
	assignedIssues: (u, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((i) => i.assigneeId === u.id),
			a,
			"IssueFilter",
			(i) => issueView(ctx.store, i),
		),
	createdIssues: (u, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((i) => i.creatorId === u.id),
			a,
			"IssueFilter",
			(i) => issueView(ctx.store, i),
		),
	teams: (u, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.teams.filter((t) => ctx.store.isMember(u, t.id)),
			a,
			"TeamFilter",
			teamView,
		),
};

const Comment: TypeResolvers<DoubleComment> = {
	issue: (c, _a, { store }) => store.findIssue(c.issueId) ?? null,
	user: (c, _a, { store }) => store.findUser(c.userId) ?? null,
	parent: (c, _a, { store }) => (c.parentId ? store.findComment(c.parentId) : null),
	children: (c, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.comments.filter((x) => x.parentId === c.id),
			a,
			"CommentFilter",
			(x) => commentView(ctx.store, x),
		),
	agentSession: (c, _a, { store }) =>
		c.agentSessionId ? store.findAgentSession(c.agentSessionId) : null,
	url: (c, _a, { store }) => `${store.findIssue(c.issueId)?.url ?? ""}#comment-${c.id.slice(0, 8)}`,
};

const Attachment: TypeResolvers<DoubleAttachment> = {
	issue: (x, _a, { store }) => store.findIssue(x.issueId),
	creator: (x, _a, { store }) => store.findUser(x.creatorId) ?? null,
};

const Project: TypeResolvers<DoubleProject> = {
	url: (p, _a, { store }) =>
		`https://linear.app/${store.state.organization.urlKey}/project/${p.slugId}`,
	state: () => "started",
	issues: (p, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.issues.filter((i) => i.projectId === p.id),
			a,
			"IssueFilter",
			(i) => issueView(ctx.store, i),
		),
};

const IssueRelation: TypeResolvers<DoubleRelation> = {
	issue: (r, _a, { store }) => store.findIssue(r.issueId),
	relatedIssue: (r, _a, { store }) => store.findIssue(r.relatedIssueId),
};

const AgentSession: TypeResolvers<DoubleAgentSession> = {
	issue: (s, _a, { store }) => (s.issueId ? store.findIssue(s.issueId) : null),
	comment: (s, _a, { store }) => (s.commentId ? store.findComment(s.commentId) : null),
	creator: (s, _a, { store }) => (s.creatorId ? store.findUser(s.creatorId) : null),
	appUser: (s, _a, { store }) => store.findUser(s.appUserId) ?? store.state.viewer,
	externalLinks: (s) => s.externalUrls,
	activities: (s, a, ctx) =>
		connect(
			ctx,
			ctx.store.state.agentActivities.filter((x) => x.agentSessionId === s.id),
			a,
			"AgentActivityFilter",
		),
};

const AgentActivity: TypeResolvers<AgentActivityRecord> = {
	agentSession: (x, _a, { store }) => store.findAgentSession(x.agentSessionId),
	user: (x, _a, { store }) => store.findUser(x.userId) ?? store.state.viewer,
};

const Organization: TypeResolvers<unknown> = {
	teams: (_o, a, ctx) => connect(ctx, ctx.store.state.teams, a, "TeamFilter", teamView),
	users: (_o, a, ctx) => connect(ctx, ctx.store.allUsers(), a, "UserFilter"),
	labels: (_o, a, ctx) =>
		connect(ctx, ctx.store.state.labels, a, "IssueLabelFilter", (l) => labelView(ctx.store, l)),
};

export const resolvers: Resolvers = {
	Query,
	Mutation,
	Issue,
	Team,
	WorkflowState,
	IssueLabel,
	User,
	Comment,
	Attachment,
	Project,
	IssueRelation,
	AgentSession,
	AgentActivity,
	Organization,
};
