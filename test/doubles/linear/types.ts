/** Records of the Linear double's in-memory state, and the inputs of its seed helpers. */

export type WorkflowStateType =
	| "triage"
	| "backlog"
	| "unstarted"
	| "started"
	| "completed"
	| "canceled";

export type IssueRelationType = "blocks" | "duplicate" | "related" | "similar";

export type AgentSessionStatus =
	| "pending"
	| "active"
	| "awaitingInput"
	| "complete"
	| "error"
	| "stale";

interface DoubleOrganization {
	id: string;
	name: string;
	urlKey: string;
}

export interface DoubleUser {
	id: string;
	name: string;
	displayName: string;
	email: string;
	app: boolean;
	/** False once deactivated: Team.members leaves the user out unless asked to include them. */
	active: boolean;
	/** A guest of the workspace, limited to its teams. */
	guest: boolean;
	/** The teams the user is a member of; null: every team (the double's default). */
	teamIds: string[] | null;
	createdAt: string;
	updatedAt: string;
}

export interface DoubleTeam {
	id: string;
	key: string;
	name: string;
	description: string | null;
	/** The number the last issue created in this team got. */
	lastIssueNumber: number;
	createdAt: string;
	updatedAt: string;
}

export interface DoubleWorkflowState {
	id: string;
	teamId: string;
	name: string;
	type: WorkflowStateType;
	position: number;
	color: string;
	description: string | null;
	createdAt: string;
	updatedAt: string;
}

export interface DoubleLabel {
	id: string;
	/** null for a workspace-level label. */
	teamId: string | null;
	name: string;
	color: string;
	description: string | null;
	createdAt: string;
	updatedAt: string;
}

export interface DoubleProject {
	id: string;
	name: string;
	slugId: string;
	createdAt: string;
	updatedAt: string;
}

export interface DoubleIssue {
	id: string;
	identifier: string;
	number: number;
	title: string;
	description: string | null;
	/** 0 none, 1 urgent, 2 high, 3 medium, 4 low. */
	priority: number;
	teamId: string;
	stateId: string;
	labelIds: string[];
	projectId: string | null;
	assigneeId: string | null;
	creatorId: string | null;
	parentId: string | null;
	estimate: number | null;
	dueDate: string | null;
	previousIdentifiers: string[];
	/** `https://linear.app/<org>/issue/<identifier>/<title-slug>`, kept in step with the title. */
	url: string;
	branchName: string;
	createdAt: string;
	updatedAt: string;
	startedAt: string | null;
	completedAt: string | null;
	canceledAt: string | null;
	archivedAt: string | null;
}

export interface DoubleRelation {
	id: string;
	type: IssueRelationType;
	/** The issue the relation starts from: for "blocks", the blocking issue. */
	issueId: string;
	relatedIssueId: string;
	createdAt: string;
	updatedAt: string;
}

export interface DoubleComment {
	id: string;
	issueId: string;
	body: string;
	userId: string;
	parentId: string | null;
	agentSessionId: string | null;
	createdAt: string;
	updatedAt: string;
	editedAt: string | null;
}

export interface DoubleAttachment {
	id: string;
	issueId: string;
	url: string;
	title: string;
	subtitle: string | null;
	metadata: Record<string, unknown>;
	iconUrl: string | null;
	creatorId: string;
	createdAt: string;
	updatedAt: string;
}

/** What one issue mutation received, in order. */
interface IssueUpdateRecord {
	issueId: string;
	identifier: string;
	mutation: "issueUpdate" | "issueAddLabel" | "issueRemoveLabel";
	input: Record<string, unknown>;
	at: string;
}

export interface DoubleAgentSession {
	id: string;
	issueId: string | null;
	commentId: string | null;
	creatorId: string | null;
	appUserId: string;
	status: AgentSessionStatus;
	plan: unknown;
	externalUrls: { label: string; url: string }[];
	externalLink: string | null;
	dismissedAt: string | null;
	startedAt: string | null;
	endedAt: string | null;
	createdAt: string;
	updatedAt: string;
}

export interface AgentActivityRecord {
	id: string;
	agentSessionId: string;
	content: { type: string; [key: string]: unknown };
	signal: string | null;
	signalMetadata: unknown;
	ephemeral: boolean;
	userId: string;
	/** The raw `agentActivityCreate` input, or null for activities the double made itself. */
	input: Record<string, unknown> | null;
	createdAt: string;
	updatedAt: string;
}

interface AgentSessionUpdateRecord {
	agentSessionId: string;
	input: Record<string, unknown>;
	at: string;
}

export interface LinearDoubleState {
	organization: DoubleOrganization;
	/** The OAuth client id reported in agent session webhooks. */
	oauthClientId: string;
	/** The user the API key belongs to (an app user for agent integrations). */
	viewer: DoubleUser;
	/** Users other than the viewer. */
	users: DoubleUser[];
	teams: DoubleTeam[];
	states: DoubleWorkflowState[];
	labels: DoubleLabel[];
	projects: DoubleProject[];
	issues: DoubleIssue[];
	relations: DoubleRelation[];
	comments: DoubleComment[];
	attachments: DoubleAttachment[];
	issueUpdates: IssueUpdateRecord[];
	agentSessions: DoubleAgentSession[];
	agentActivities: AgentActivityRecord[];
	agentSessionUpdates: AgentSessionUpdateRecord[];
}

export type StateSpec = string | { name: string; type: WorkflowStateType };

export interface AddTeamInput {
	key: string;
	name: string;
	/** Default: Backlog, Todo, In Progress, In Review, Done, Canceled. */
	states?: StateSpec[];
	id?: string;
}

export interface AddIssueInput {
	teamKey: string;
	title: string;
	description?: string | null;
	/** A workflow state name of the team; default: the team's default state. */
	state?: string;
	/** Label names; a missing label is created on the team. */
	labels?: string[];
	priority?: number;
	/** Project name; a missing project is created. */
	project?: string;
	/** User id or email of the assignee. */
	assignee?: string;
	id?: string;
	createdAt?: string;
}

export interface AddUserInput {
	name: string;
	email?: string;
	displayName?: string;
	app?: boolean;
	/** Default true. */
	active?: boolean;
	guest?: boolean;
	/** Team ids or keys the user is a member of; default: every team. */
	teams?: string[];
	id?: string;
}
