/**
 * In-memory state of the Linear double: plain records (see types.ts) that tests may seed, read
 * and assert on. Record fields are named after the GraphQL fields they back wherever possible, so
 * the generic field resolver can serve them without a dedicated resolver.
 */
import { randomUUID } from "node:crypto";
import type {
	AddIssueInput,
	AddTeamInput,
	AddUserInput,
	AgentSessionStatus,
	DoubleAgentSession,
	DoubleAttachment,
	DoubleComment,
	DoubleIssue,
	DoubleLabel,
	DoubleProject,
	DoubleRelation,
	DoubleTeam,
	DoubleUser,
	DoubleWorkflowState,
	IssueRelationType,
	LinearDoubleState,
	StateSpec,
	WorkflowStateType,
} from "./types";

export type * from "./types";

const DEFAULT_STATES: StateSpec[] = [
	{ name: "Backlog", type: "backlog" },
	{ name: "Todo", type: "unstarted" },
	{ name: "In Progress", type: "started" },
	{ name: "In Review", type: "started" },
	{ name: "Done", type: "completed" },
	{ name: "Canceled", type: "canceled" },
];

const STATE_COLORS: Record<WorkflowStateType, string> = {
	triage: "#fc7840",
	backlog: "#bec2c8",
	unstarted: "#e2e2e2",
	started: "#f2c94c",
	completed: "#5e6ad2",
	canceled: "#95a2b3",
};

export const PRIORITY_LABELS = ["No priority", "Urgent", "High", "Medium", "Low"];

/** The workflow state type a bare state name most likely has. */
function guessStateType(name: string): WorkflowStateType {
	const n = name.toLowerCase();
	if (n.includes("triage")) return "triage";
	if (n.includes("backlog") || n.includes("icebox")) return "backlog";
	if (/cancel|duplicate|won'?t|obsolete/.test(n)) return "canceled";
	if (/done|complete|merged|shipped|released|closed/.test(n)) return "completed";
	if (/todo|to do|ready|unstarted|planned/.test(n)) return "unstarted";
	return "started";
}

function slugify(text: string): string {
	return text
		.toLowerCase()
		.normalize("NFKD")
		.replace(/[^a-z0-9]+/g, "-")
		.replace(/^-+|-+$/g, "")
		.slice(0, 60)
		.replace(/-+$/g, "");
}

/** The state plus the seed and lookup helpers the resolvers and tests share. */
export class LinearStore {
	readonly state: LinearDoubleState;
	private syncId = 1000;

	constructor(readonly now: () => Date = () => new Date()) {
		const at = this.iso();
		this.state = {
			organization: { id: randomUUID(), name: "Acme", urlKey: "acme" },
			oauthClientId: randomUUID(),
			viewer: {
				id: randomUUID(),
				name: "Lisa",
				displayName: "lisa",
				email: "lisa@acme.test",
				app: false,
				active: true,
				guest: false,
				teamIds: null,
				createdAt: at,
				updatedAt: at,
			},
			users: [],
			teams: [],
			states: [],
			labels: [],
			projects: [],
			issues: [],
			relations: [],
			comments: [],
			attachments: [],
			issueUpdates: [],
			agentSessions: [],
			agentActivities: [],
			agentSessionUpdates: [],
		};
	}

	iso(): string {
		return this.now().toISOString();
	}

	nextSyncId(): number {
		this.syncId += 1;
		return this.syncId;
	}

	// ---- seeding ----

	addUser(input: AddUserInput): DoubleUser {
		const at = this.iso();
		const user: DoubleUser = {
			id: input.id ?? randomUUID(),
			name: input.name,
			displayName: input.displayName ?? input.name.split(" ")[0]?.toLowerCase() ?? input.name,
			email: input.email ?? `${slugify(input.name) || "user"}@acme.test`,
			app: input.app ?? false,
			active: input.active ?? true,
			guest: input.guest ?? false,
			teamIds: input.teams?.map((t) => this.requireTeam(t).id) ?? null,
			createdAt: at,
			updatedAt: at,
		};
		this.state.users.push(user);
		return user;
	}

	addTeam(input: AddTeamInput): DoubleTeam & { states: DoubleWorkflowState[] } {
		if (this.state.teams.some((t) => t.key.toLowerCase() === input.key.toLowerCase()))
			throw new Error(`Linear double: team ${input.key} already exists`);
		const at = this.iso();
		const team: DoubleTeam = {
			id: input.id ?? randomUUID(),
			key: input.key,
			name: input.name,
			description: null,
			lastIssueNumber: 0,
			createdAt: at,
			updatedAt: at,
		};
		this.state.teams.push(team);
		const states = (input.states ?? DEFAULT_STATES).map((spec, position) => {
			const { name, type } =
				typeof spec === "string" ? { name: spec, type: guessStateType(spec) } : spec;
			const state: DoubleWorkflowState = {
				id: randomUUID(),
				teamId: team.id,
				name,
				type,
				position,
				color: STATE_COLORS[type],
				description: null,
				createdAt: at,
				updatedAt: at,
			};
			this.state.states.push(state);
			return state;
		});
		return { ...team, states };
	}

	/** A label on a team (id or key), or a workspace label when `team` is null. */
	addLabel(team: string | null, name: string, color = "#bec2c8"): DoubleLabel {
		const teamId = team === null ? null : this.requireTeam(team).id;
		const at = this.iso();
		const label: DoubleLabel = {
			id: randomUUID(),
			teamId,
			name,
			color,
			description: null,
			createdAt: at,
			updatedAt: at,
		};
		this.state.labels.push(label);
		return label;
	}

	addProject(name: string): DoubleProject {
		const at = this.iso();
		const project: DoubleProject = {
			id: randomUUID(),
			name,
			slugId: randomUUID().slice(0, 12),
			createdAt: at,
			updatedAt: at,
		};
		this.state.projects.push(project);
		return project;
	}

	addIssue(input: AddIssueInput): DoubleIssue {
		const team = this.requireTeam(input.teamKey);
		const state = input.state
			? this.teamStates(team.id).find((s) => s.name.toLowerCase() === input.state?.toLowerCase())
			: this.defaultState(team.id);
		if (!state) throw new Error(`Linear double: team ${team.key} has no state "${input.state}"`);
		const labelIds = (input.labels ?? []).map(
			(name) => (this.findLabel(team.id, name) ?? this.addLabel(team.id, name)).id,
		);
		const projectId = input.project
			? (
					this.state.projects.find((p) => p.name === input.project) ??
					this.addProject(input.project)
				).id
			: null;
		const assigneeId = input.assignee ? this.requireUser(input.assignee).id : null;
		const at = input.createdAt ?? this.iso();
		team.lastIssueNumber += 1;
		const issue: DoubleIssue = {
			id: input.id ?? randomUUID(),
			identifier: `${team.key}-${team.lastIssueNumber}`,
			number: team.lastIssueNumber,
			title: input.title,
			description: input.description ?? null,
			priority: input.priority ?? 0,
			teamId: team.id,
			stateId: state.id,
			labelIds,
			projectId,
			assigneeId,
			creatorId: null,
			parentId: null,
			estimate: null,
			dueDate: null,
			previousIdentifiers: [],
			url: "",
			branchName: "",
			createdAt: at,
			updatedAt: at,
			startedAt: null,
			completedAt: null,
			canceledAt: null,
			archivedAt: null,
		};
		this.refreshDerived(issue);
		this.stampStateChange(issue, state, at);
		this.state.issues.push(issue);
		return issue;
	}

	addRelation(from: string, type: IssueRelationType, to: string): DoubleRelation {
		const at = this.iso();
		const relation: DoubleRelation = {
			id: randomUUID(),
			type,
			issueId: this.requireIssue(from).id,
			relatedIssueId: this.requireIssue(to).id,
			createdAt: at,
			updatedAt: at,
		};
		this.state.relations.push(relation);
		return relation;
	}

	/** A comment by `userId` (default: the viewer). */
	addComment(
		issue: string,
		body: string,
		opts: { userId?: string; parentId?: string | null; agentSessionId?: string | null } = {},
	): DoubleComment {
		const at = this.iso();
		const comment: DoubleComment = {
			id: randomUUID(),
			issueId: this.requireIssue(issue).id,
			body,
			userId: opts.userId ?? this.state.viewer.id,
			parentId: opts.parentId ?? null,
			agentSessionId: opts.agentSessionId ?? null,
			createdAt: at,
			updatedAt: at,
			editedAt: null,
		};
		this.state.comments.push(comment);
		return comment;
	}

	addAgentSession(opts: {
		issue?: string;
		commentId?: string | null;
		creatorId?: string | null;
		status?: AgentSessionStatus;
		id?: string;
	}): DoubleAgentSession {
		const at = this.iso();
		const session: DoubleAgentSession = {
			id: opts.id ?? randomUUID(),
			issueId: opts.issue ? this.requireIssue(opts.issue).id : null,
			commentId: opts.commentId ?? null,
			creatorId: opts.creatorId ?? null,
			appUserId: this.state.viewer.id,
			status: opts.status ?? "pending",
			plan: null,
			externalUrls: [],
			externalLink: null,
			dismissedAt: null,
			startedAt: null,
			endedAt: null,
			createdAt: at,
			updatedAt: at,
		};
		this.state.agentSessions.push(session);
		return session;
	}

	// ---- lookups (undefined when missing) ----

	allUsers(): DoubleUser[] {
		const viewer = this.state.viewer;
		return [viewer, ...this.state.users.filter((u) => u.id !== viewer.id)];
	}

	findUser(idOrEmail: string): DoubleUser | undefined {
		return this.allUsers().find((u) => u.id === idOrEmail || u.email === idOrEmail);
	}

	/** Whether the user is a member of the team (every user is, unless given teams). */
	isMember(user: DoubleUser, teamId: string): boolean {
		return user.teamIds === null || user.teamIds.includes(teamId);
	}

	/** By id or (case-insensitive) key. */
	findTeam(idOrKey: string): DoubleTeam | undefined {
		const key = idOrKey.toLowerCase();
		return this.state.teams.find((t) => t.id === idOrKey || t.key.toLowerCase() === key);
	}

	findState(id: string): DoubleWorkflowState | undefined {
		return this.state.states.find((s) => s.id === id);
	}

	findLabelById(id: string): DoubleLabel | undefined {
		return this.state.labels.find((l) => l.id === id);
	}

	/** A label usable in the team by name: the team's own first, then a workspace label. */
	findLabel(teamId: string, name: string): DoubleLabel | undefined {
		const n = name.toLowerCase();
		const candidates = this.state.labels.filter((l) => l.name.toLowerCase() === n);
		return candidates.find((l) => l.teamId === teamId) ?? candidates.find((l) => l.teamId === null);
	}

	findProject(idOrSlugOrName: string): DoubleProject | undefined {
		return this.state.projects.find(
			(p) => p.id === idOrSlugOrName || p.slugId === idOrSlugOrName || p.name === idOrSlugOrName,
		);
	}

	/** By UUID, or by identifier (case-insensitive, also a previous identifier). */
	findIssue(idOrIdentifier: string): DoubleIssue | undefined {
		const ref = idOrIdentifier.toUpperCase();
		return (
			this.state.issues.find((i) => i.id === idOrIdentifier) ??
			this.state.issues.find((i) => i.identifier.toUpperCase() === ref) ??
			this.state.issues.find((i) => i.previousIdentifiers.some((p) => p.toUpperCase() === ref))
		);
	}

	findComment(id: string): DoubleComment | undefined {
		return this.state.comments.find((c) => c.id === id);
	}

	findAttachment(id: string): DoubleAttachment | undefined {
		return this.state.attachments.find((a) => a.id === id);
	}

	findAgentSession(id: string): DoubleAgentSession | undefined {
		return this.state.agentSessions.find((s) => s.id === id);
	}

	teamStates(teamId: string): DoubleWorkflowState[] {
		return this.state.states
			.filter((s) => s.teamId === teamId)
			.sort((a, b) => a.position - b.position);
	}

	/** The state new issues get: the first backlog state, else the first unstarted one. */
	defaultState(teamId: string): DoubleWorkflowState | undefined {
		const states = this.teamStates(teamId);
		return (
			states.find((s) => s.type === "backlog") ??
			states.find((s) => s.type === "unstarted") ??
			states[0]
		);
	}

	// ---- lookups that throw (for seeding and test assertions) ----

	requireTeam(idOrKey: string): DoubleTeam {
		const team = this.findTeam(idOrKey);
		if (!team) throw new Error(`Linear double: no team ${idOrKey}`);
		return team;
	}

	requireIssue(idOrIdentifier: string): DoubleIssue {
		const issue = this.findIssue(idOrIdentifier);
		if (!issue) throw new Error(`Linear double: no issue ${idOrIdentifier}`);
		return issue;
	}

	requireUser(idOrEmail: string): DoubleUser {
		const user = this.findUser(idOrEmail);
		if (!user) throw new Error(`Linear double: no user ${idOrEmail}`);
		return user;
	}

	stateName(issue: DoubleIssue | string): string {
		const i = typeof issue === "string" ? this.requireIssue(issue) : issue;
		return this.findState(i.stateId)?.name ?? "";
	}

	labelNames(issue: DoubleIssue | string): string[] {
		const i = typeof issue === "string" ? this.requireIssue(issue) : issue;
		return i.labelIds.map((id) => this.findLabelById(id)?.name ?? id);
	}

	// ---- issue bookkeeping ----

	/** Recompute url and branch name from identifier and title. */
	refreshDerived(issue: DoubleIssue): void {
		const slug = slugify(issue.title);
		const org = this.state.organization.urlKey;
		issue.url = `https://linear.app/${org}/issue/${issue.identifier}${slug ? `/${slug}` : ""}`;
		const branchSlug = slugify(`${issue.identifier} ${issue.title}`);
		issue.branchName = `${this.state.viewer.displayName}/${branchSlug}`;
	}

	/** Set startedAt / completedAt / canceledAt the way Linear does when an issue changes state. */
	stampStateChange(issue: DoubleIssue, state: DoubleWorkflowState, at: string): void {
		issue.stateId = state.id;
		if (state.type === "started") issue.startedAt ??= at;
		issue.completedAt = state.type === "completed" ? (issue.completedAt ?? at) : null;
		issue.canceledAt = state.type === "canceled" ? (issue.canceledAt ?? at) : null;
	}
}
