/**
 * Build and sign Linear webhook deliveries from the double's state, shaped like Linear's Issue and
 * AgentSessionEvent webhooks (see @linear/sdk's webhook payload types).
 *
 *   const payload = issueWebhook({ action: "update", issue, double, updatedFrom: { labelIds: [] } });
 *   const raw = JSON.stringify(payload);
 *   await fetch(receiverUrl, { method: "POST", body: raw, headers: linearHeaders(raw, secret) });
 */
import { createHmac, randomUUID } from "node:crypto";
import type {
	AgentSessionEventWebhookPayload,
	EntityWebhookPayloadWithIssueData,
} from "@linear/sdk/webhooks";
import type { LinearDouble } from "./server";
import {
	type DoubleAgentSession,
	type DoubleIssue,
	type DoubleUser,
	PRIORITY_LABELS,
} from "./state";

/** Hex HMAC-SHA256 of the raw body: the `Linear-Signature` header value. */
export function signLinear(rawBody: string, secret: string): string {
	return createHmac("sha256", secret).update(rawBody).digest("hex");
}

/** Headers of a webhook delivery of `rawBody`; `linear-event` is the payload's `type`. */
export function linearHeaders(
	rawBody: string,
	secret: string,
	deliveryId: string = randomUUID(),
): Record<string, string> {
	let event = "";
	try {
		event = String((JSON.parse(rawBody) as { type?: unknown }).type ?? "");
	} catch {
		// not JSON: no event header value
	}
	return {
		"content-type": "application/json; charset=utf-8",
		"linear-signature": signLinear(rawBody, secret),
		"linear-delivery": deliveryId,
		"linear-event": event,
		"user-agent": "Linear-Webhook",
	};
}

export interface WebhookActor {
	id: string;
	name: string;
	/** "user" (default), "OauthClient", "Integration"... */
	type?: string;
	email?: string;
	url?: string;
}

function userChild(double: LinearDouble, user: WebhookActor | DoubleUser) {
	const urlKey = double.state.organization.urlKey;
	const handle = "displayName" in user ? user.displayName : user.name.toLowerCase();
	return {
		id: user.id,
		name: user.name,
		email: user.email ?? `${handle.replace(/\W+/g, ".")}@acme.test`,
		url: ("url" in user && user.url) || `https://linear.app/${urlKey}/profiles/${handle}`,
	};
}

/** A human user of the double to act in webhooks: the first non-viewer user, created if needed. */
function webhookActor(double: LinearDouble): DoubleUser {
	const viewerId = double.state.viewer.id;
	return (
		double.state.users.find((u) => u.id !== viewerId && !u.app) ??
		double.addUser({ name: "Pat Human", email: "pat@acme.test" })
	);
}

function teamChild(double: LinearDouble, teamId: string) {
	const team = double.state.teams.find((t) => t.id === teamId);
	return { id: teamId, key: team?.key ?? "", name: team?.name ?? "" };
}

export interface IssueWebhookOptions {
	action: "create" | "update" | "remove";
	issue: DoubleIssue;
	double: LinearDouble;
	/** The changed fields' previous values, for "update" (e.g. `{ stateId: "…" }`). */
	updatedFrom?: Record<string, unknown>;
	/** Default: a human user of the double (see webhookActor). */
	actor?: WebhookActor;
	/** webhookTimestamp in ms (default now); the SDK rejects timestamps older than a minute. */
	timestamp?: number;
	webhookId?: string;
}

/** The SDK's payload types, with dates as they travel: ISO strings. */
type Wire<T> = Omit<T, "createdAt"> & { createdAt: string };
export type IssueWebhookPayload = Wire<EntityWebhookPayloadWithIssueData>;
export type AgentSessionEventPayload = Wire<AgentSessionEventWebhookPayload>;

/** An `Issue` webhook payload for the issue as the double currently holds it. */
export function issueWebhook(opts: IssueWebhookOptions): IssueWebhookPayload {
	const { issue, double } = opts;
	const timestamp = opts.timestamp ?? Date.now();
	const actor = opts.actor ?? webhookActor(double);
	const state = double.state.states.find((s) => s.id === issue.stateId);
	const labels = issue.labelIds.flatMap((id) => {
		const label = double.state.labels.find((l) => l.id === id);
		return label ? [{ id: label.id, name: label.name, color: label.color }] : [];
	});
	const project = double.state.projects.find((p) => p.id === issue.projectId);
	return {
		action: opts.action,
		type: "Issue",
		actor: { ...userChild(double, actor), type: ("type" in actor && actor.type) || "user" },
		createdAt: new Date(timestamp).toISOString(),
		url: issue.url,
		organizationId: double.state.organization.id,
		webhookId: opts.webhookId ?? randomUUID(),
		webhookTimestamp: timestamp,
		data: {
			id: issue.id,
			identifier: issue.identifier,
			number: issue.number,
			title: issue.title,
			description: issue.description,
			priority: issue.priority,
			priorityLabel: PRIORITY_LABELS[issue.priority] ?? "No priority",
			prioritySortOrder: 0,
			sortOrder: 0,
			teamId: issue.teamId,
			team: teamChild(double, issue.teamId),
			stateId: issue.stateId,
			state: {
				id: issue.stateId,
				name: state?.name ?? "",
				type: state?.type ?? "",
				color: state?.color ?? "",
			},
			labelIds: [...issue.labelIds],
			labels,
			projectId: issue.projectId,
			...(project ? { project: { id: project.id, name: project.name, url: "" } } : {}),
			assigneeId: issue.assigneeId,
			creatorId: issue.creatorId,
			parentId: issue.parentId,
			estimate: issue.estimate,
			dueDate: issue.dueDate,
			previousIdentifiers: [...issue.previousIdentifiers],
			subscriberIds: [],
			releases: [],
			reactionData: {},
			url: issue.url,
			createdAt: issue.createdAt,
			updatedAt: issue.updatedAt,
			startedAt: issue.startedAt,
			completedAt: issue.completedAt,
			canceledAt: issue.canceledAt,
			archivedAt:
				opts.action === "remove" ? (issue.archivedAt ?? issue.updatedAt) : issue.archivedAt,
		},
		...(opts.updatedFrom ? { updatedFrom: opts.updatedFrom } : {}),
	};
}

export interface AgentSessionWebhookOptions {
	/** "created": the app was mentioned or delegated; "prompted": the user replied in the session. */
	action: "created" | "prompted";
	double: LinearDouble;
	/** The session; default: a new one on `issue`, registered in the double. */
	session?: DoubleAgentSession;
	/** Needed when no session is given. */
	issue?: DoubleIssue;
	/** Who started or prompted the session; default: a human user of the double. */
	creator?: WebhookActor;
	/** "created": the body of the comment that started the session (the comment is added). */
	commentBody?: string;
	/** "prompted": the user's message (recorded as a prompt activity and a reply comment). */
	promptBody?: string;
	/** "prompted": e.g. "stop" when the user asked the agent to stop. */
	signal?: string;
	/** "created": the prompt context Linear renders for the agent (default: a small XML summary). */
	promptContext?: string;
	timestamp?: number;
	webhookId?: string;
}

/** An `AgentSessionEvent` webhook payload; records the session, comment and prompt in the double. */
export function agentSessionWebhook(opts: AgentSessionWebhookOptions): AgentSessionEventPayload {
	const { double } = opts;
	const timestamp = opts.timestamp ?? Date.now();
	const at = new Date(timestamp).toISOString();
	const creator = opts.creator ?? webhookActor(double);
	let session = opts.session;
	if (!session) {
		if (!opts.issue) throw new Error("agentSessionWebhook: give a session or an issue");
		const comment = double.addComment(
			opts.issue.id,
			opts.commentBody ?? `@${double.state.viewer.displayName}`,
			{
				userId: creator.id,
			},
		);
		session = double.addAgentSession({
			issue: opts.issue.id,
			commentId: comment.id,
			creatorId: creator.id,
		});
		comment.agentSessionId = session.id;
	}
	const issue = session.issueId ? double.issue(session.issueId) : undefined;
	const comment = double.state.comments.find((c) => c.id === session.commentId);

	let agentActivity: AgentSessionEventWebhookPayload["agentActivity"];
	if (opts.action === "prompted") {
		const body = opts.promptBody ?? "";
		const reply = issue
			? double.addComment(issue.id, body, {
					userId: creator.id,
					parentId: session.commentId,
					agentSessionId: session.id,
				})
			: undefined;
		const activity = {
			id: randomUUID(),
			agentSessionId: session.id,
			content: { type: "prompt", body },
			signal: opts.signal ?? null,
			signalMetadata: null,
			ephemeral: false,
			userId: creator.id,
			input: null,
			createdAt: at,
			updatedAt: at,
		};
		double.state.agentActivities.push(activity);
		agentActivity = {
			id: activity.id,
			agentSessionId: session.id,
			content: activity.content,
			createdAt: at,
			updatedAt: at,
			signal: opts.signal ?? null,
			sourceCommentId: reply?.id ?? null,
			userId: creator.id,
			user: userChild(double, creator),
		};
	}

	const team = issue ? teamChild(double, issue.teamId) : undefined;
	const promptContext =
		opts.promptContext ??
		(issue
			? `<issue identifier="${issue.identifier}">\n<title>${issue.title}</title>\n` +
				`<description>${issue.description ?? ""}</description>\n<team name="${team?.name}"/>\n</issue>`
			: undefined);
	return {
		type: "AgentSessionEvent",
		action: opts.action,
		createdAt: at,
		organizationId: double.state.organization.id,
		oauthClientId: double.state.oauthClientId,
		appUserId: session.appUserId,
		webhookId: opts.webhookId ?? randomUUID(),
		webhookTimestamp: timestamp,
		agentSession: {
			id: session.id,
			appUserId: session.appUserId,
			organizationId: double.state.organization.id,
			status: session.status,
			type: "commentThread",
			createdAt: session.createdAt,
			updatedAt: session.updatedAt,
			creatorId: session.creatorId,
			commentId: session.commentId,
			sourceCommentId: session.commentId,
			issueId: session.issueId,
			creator: userChild(double, creator),
			...(comment
				? {
						comment: {
							id: comment.id,
							body: comment.body,
							userId: comment.userId,
							issueId: comment.issueId,
						},
					}
				: {}),
			...(issue && team
				? {
						issue: {
							id: issue.id,
							identifier: issue.identifier,
							title: issue.title,
							description: issue.description,
							url: issue.url,
							teamId: issue.teamId,
							team,
						},
					}
				: {}),
		},
		...(agentActivity ? { agentActivity } : {}),
		...(opts.action === "created"
			? {
					promptContext,
					previousComments: double.state.comments
						.filter((c) => c.issueId === session.issueId && c.id !== comment?.id)
						.map((c) => ({ id: c.id, body: c.body, userId: c.userId, issueId: c.issueId })),
				}
			: {}),
	};
}
