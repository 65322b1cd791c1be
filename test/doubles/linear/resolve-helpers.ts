/**
 * Shared pieces of the resolvers: the resolver types, filterable "views" of the records (what
 * Linear's filter inputs can address), connections, and lookups that fail the way Linear does.
 */
import { notFound, notImplemented } from "./errors";
import { type ConnectionArgs, type Filter, matchesFilter, paginate, type View } from "./filter";
import type {
	DoubleAgentSession,
	DoubleAttachment,
	DoubleComment,
	DoubleIssue,
	DoubleLabel,
	DoubleProject,
	DoubleTeam,
	DoubleUser,
	DoubleWorkflowState,
	LinearStore,
} from "./state";

export interface Context {
	store: LinearStore;
}

export type Args = Record<string, unknown>;
type FieldResolver<S> = (source: S, args: Args, ctx: Context) => unknown;
export type TypeResolvers<S> = Record<string, FieldResolver<S>>;
export type Resolvers = Record<string, TypeResolvers<never>>;

// ---- filter views ----

export function teamView(t: DoubleTeam): View {
	const { id, key, name, description, createdAt, updatedAt } = t;
	return { id, key, name, description, createdAt, updatedAt, private: false };
}

export function userView(u: DoubleUser | undefined): View | null {
	if (!u) return null;
	const { id, name, displayName, email, active, app, guest, createdAt, updatedAt } = u;
	return { id, name, displayName, email, active, app, guest, createdAt, updatedAt };
}

export function stateView(store: LinearStore, s: DoubleWorkflowState): View {
	const { id, name, type, position, color, description, createdAt, updatedAt } = s;
	const team = store.findTeam(s.teamId);
	return {
		...{ id, name, type, position, color, description, createdAt, updatedAt },
		team: team ? teamView(team) : null,
	};
}

export function labelView(store: LinearStore, l: DoubleLabel): View {
	const { id, name, color, description, createdAt, updatedAt } = l;
	const team = l.teamId ? store.findTeam(l.teamId) : undefined;
	return {
		...{ id, name, color, description, createdAt, updatedAt },
		isGroup: false,
		parent: null,
		team: team ? teamView(team) : null,
	};
}

export function projectView(p: DoubleProject | undefined): View | null {
	if (!p) return null;
	const { id, name, slugId, createdAt, updatedAt } = p;
	return { id, name, slugId, createdAt, updatedAt };
}

export function issueView(store: LinearStore, i: DoubleIssue, depth = 0): View {
	const team = store.findTeam(i.teamId);
	const state = store.findState(i.stateId);
	const parent = i.parentId && depth < 3 ? store.findIssue(i.parentId) : undefined;
	const { id, identifier, number, title, description, priority, estimate, dueDate } = i;
	const { createdAt, updatedAt, startedAt, completedAt, canceledAt, archivedAt } = i;
	return {
		...{ id, identifier, number, title, description, priority, estimate, dueDate },
		...{ createdAt, updatedAt, startedAt, completedAt, canceledAt, archivedAt },
		team: team ? teamView(team) : null,
		state: state ? stateView(store, state) : null,
		labels: labelsOf(store, i).map((l) => labelView(store, l)),
		project: projectView(i.projectId ? store.findProject(i.projectId) : undefined),
		assignee: userView(i.assigneeId ? store.findUser(i.assigneeId) : undefined),
		creator: userView(i.creatorId ? store.findUser(i.creatorId) : undefined),
		parent: parent ? issueView(store, parent, depth + 1) : null,
	};
}

export function commentView(store: LinearStore, c: DoubleComment): View {
	const issue = store.findIssue(c.issueId);
	const { id, body, createdAt, updatedAt } = c;
	return {
		...{ id, body, createdAt, updatedAt },
		user: userView(store.findUser(c.userId)),
		issue: issue ? issueView(store, issue) : null,
		parent: c.parentId ? { id: c.parentId } : null,
	};
}

export function attachmentView(store: LinearStore, a: DoubleAttachment): View {
	const { id, title, subtitle, url, createdAt, updatedAt } = a;
	return {
		...{ id, title, subtitle, url, createdAt, updatedAt },
		creator: userView(store.findUser(a.creatorId)),
		sourceType: null,
	};
}

// ---- helpers ----

export function labelsOf(store: LinearStore, issue: DoubleIssue): DoubleLabel[] {
	return issue.labelIds.flatMap((id) => store.findLabelById(id) ?? []);
}

interface Pageable {
	id: string;
	updatedAt: string;
	archivedAt?: string | null;
}

/** Filter (when the request has a filter) and paginate. */
export function connect<T extends Pageable>(
	ctx: Context,
	items: T[],
	args: Args,
	filterName: string,
	view?: (item: T) => View,
) {
	const filter = args.filter as Filter | null | undefined;
	if (filter && !view) throw notImplemented(`filter argument ${filterName}`);
	const now = ctx.store.now();
	const kept =
		filter && view ? items.filter((i) => matchesFilter(view(i), filter, filterName, now)) : items;
	return paginate(kept, args as ConnectionArgs);
}

export function str(value: unknown): string {
	return typeof value === "string" ? value : String(value ?? "");
}

export function requireIssue(ctx: Context, id: unknown): DoubleIssue {
	const issue = ctx.store.findIssue(str(id));
	if (!issue) throw notFound("Issue");
	return issue;
}

export function requireSession(ctx: Context, id: unknown): DoubleAgentSession {
	const session = ctx.store.findAgentSession(str(id));
	if (!session) throw notFound("AgentSession");
	return session;
}

export function must<T>(value: T | undefined, entity: string): T {
	if (value === undefined) throw notFound(entity);
	return value;
}

export function payload<K extends string, V>(ctx: Context, key: K, value: V) {
	return { success: true, lastSyncId: ctx.store.nextSyncId(), [key]: value } as {
		success: true;
		lastSyncId: number;
	} & Record<K, V>;
}
