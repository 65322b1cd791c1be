import { writtenAt } from "../../domain/commands";
import { MAX_FOLLOW_UP_TEXT } from "../../domain/follow-up";

// Linear agent sessions (docs/trackers.md › Linear agent sessions (delegate an issue to Lisa)): an
// issue delegated to (or mentioning) Lisa's app starts a run; Lisa answers in the session with
// activities (their contents are src/domain/session-activity.ts). Pure: the payload's rules.

export interface AgentSessionEvent {
	type?: string;
	action?: string;
	agentSession?: {
		id?: string;
		issueId?: string | null;
		issue?: { id?: string; identifier?: string } | null;
		creator?: { id?: string; name?: string } | null;
		/** The comment that mentioned Lisa (absent when the issue was delegated). */
		comment?: { id?: string; body?: string; userId?: string } | null;
	};
	/** `created`: the context Linear renders for the agent (the issue, its comments, guidance). */
	promptContext?: string | null;
	agentActivity?: {
		id?: string;
		createdAt?: string | null;
		signal?: string | null;
		body?: string;
		content?: { body?: string } | null;
		/** Who wrote it: its id is what Linear is asked about before their `continue` approves. */
		userId?: string | null;
		user?: { id?: string; name?: string } | null;
	} | null;
}

/** What asked for a run: the mention, or Linear's context of a delegation (untrusted text). */
interface SessionRequest {
	text: string;
	author?: string;
}

export type SessionVerdict =
	| {
			kind: "start";
			sessionId: string;
			issueId: string;
			issueKey?: string;
			request?: SessionRequest;
	  }
	| { kind: "stop"; sessionId: string; issueId: string; by?: string }
	| {
			kind: "prompt";
			sessionId: string;
			issueId: string;
			activityId: string;
			body: string;
			/** A name to show (the session's creator's when the activity names nobody). */
			author?: string;
			/** The activity's own user: never the creator's in its place. */
			authorId?: string;
			/** When the message was written: it approves only an older request. */
			writtenAt?: string;
	  }
	| { kind: "ignore"; reason: string };

export function agentSessionVerdict(event: AgentSessionEvent): SessionVerdict {
	const session = event.agentSession;
	const issueId = session?.issue?.id ?? session?.issueId ?? undefined;
	if (!session?.id) return { kind: "ignore", reason: "payload has no agent session" };
	if (!issueId) return { kind: "ignore", reason: "the agent session is not on an issue" };
	if (event.action === "created") {
		const request = sessionRequest(event);
		return {
			kind: "start",
			sessionId: session.id,
			issueId,
			issueKey: session.issue?.identifier,
			...(request ? { request } : {}),
		};
	}
	if (event.action !== "prompted")
		return { kind: "ignore", reason: `agent session ${event.action ?? "event"} is not handled` };
	const activity = event.agentActivity;
	const author = activity?.user?.name ?? session.creator?.name;
	if (activity?.signal === "stop")
		return { kind: "stop", sessionId: session.id, issueId, by: author };
	if (!activity?.id) return { kind: "ignore", reason: "prompted without an activity" };
	const authorId = activity.userId ?? activity.user?.id ?? undefined;
	const written = writtenAt(activity.createdAt);
	return {
		kind: "prompt",
		sessionId: session.id,
		issueId,
		activityId: activity.id,
		body: activity.content?.body ?? activity.body ?? "",
		author,
		...(authorId ? { authorId } : {}),
		...(written ? { writtenAt: written } : {}),
	};
}

/**
 * What created the session goes into the run's prompt: the mention's comment when there is one (what
 * the person asked), else Linear's prompt context. Cut to what a run keeps, never refused (Linear
 * would retry the delivery).
 */
function sessionRequest(event: AgentSessionEvent): SessionRequest | undefined {
	const mention = event.agentSession?.comment?.body?.trim();
	const text = mention || event.promptContext?.trim();
	if (!text) return undefined;
	const author = event.agentSession?.creator?.name?.slice(0, 256);
	return { text: text.slice(0, MAX_FOLLOW_UP_TEXT), ...(author ? { author } : {}) };
}
