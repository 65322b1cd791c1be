import { writtenAt } from "../../domain/commands";
import { planLines, runCostLine, runRepos } from "../../domain/comments";
import { MAX_FOLLOW_UP_TEXT } from "../../domain/follow-up";
import type { Plan } from "../../domain/plan";
import { prUrls, type Run, workSteps } from "../../domain/run";
import { stepNumber } from "../../domain/step-label";

// Linear agent sessions (README › Linear agent sessions): an issue delegated to (or mentioning)
// Lisa's app starts a run; Lisa answers in the session with activities. Pure: payload rules and
// activity contents.

/** An activity in a Linear agent session (https://linear.app/developers/agent-interaction). */
export type SessionActivity =
	| { type: "thought" | "elicitation" | "response" | "error"; body: string }
	| { type: "action"; action: string; parameter: string; result?: string };

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

const issueName = (run: Run) => run.issue?.key ?? run.issueKey ?? run.issueId;

/** The first activity, posted as soon as the run is accepted (Linear wants one within 10 s). */
export function acknowledgement(run: Run, runUrl: string): SessionActivity {
	return {
		type: "thought",
		body: `On it: reading ${issueName(run)} and preparing a workspace. Follow the run at ${runUrl}`,
	};
}

export function startedAction(run: Run): SessionActivity {
	const repos = runRepos(run);
	const where = repos.startsWith("planning") ? ` (${repos})` : ` in ${repos}`;
	return { type: "action", action: "Working on", parameter: `${issueName(run)}${where}` };
}

/** The accepted plan of a multi-repo run. */
export function planAction(plan: Plan): SessionActivity {
	return {
		type: "action",
		action: "Planned",
		// "api → web + docs": orders in sequence, equal orders side by side.
		parameter: [...new Set(plan.steps.map((s) => s.order))]
			.map((o) =>
				plan.steps
					.filter((s) => s.order === o)
					.map((s) => s.repo)
					.join(" + "),
			)
			.join(" → "),
		result: planLines(plan).join("\n"),
	};
}

export function stepAction(run: Run, stepIndex: number): SessionActivity {
	const step = run.steps[stepIndex];
	const work = workSteps(run);
	const position = stepNumber(run.steps, stepIndex);
	return {
		type: "action",
		action: "Opened pull request",
		parameter: step?.prUrl ?? `step ${position}`,
		result: `${step?.repo ?? "repo"}: step ${position} of ${work.length} done`,
	};
}

/** The session's last activity: the PR links, or what went wrong. */
export function finalActivity(run: Run, runUrl: string): SessionActivity {
	const prs = prUrls(run);
	const list = prs.map((u) => `- ${u}`).join("\n");
	const end = `${runCostLine(run)}\nRun: ${runUrl}`;
	if (run.status === "succeeded")
		return {
			type: "response",
			body: `${prs.length === 1 ? "Opened a pull request" : `Opened ${prs.length} pull requests`}:\n${list}\n\n${end}`,
		};
	if (run.status === "cancelled")
		return {
			type: "response",
			body: `Stopped: ${run.error ?? "the run was cancelled"}.${prs.length ? `\n\nPull requests opened before stopping:\n${list}` : ""}\n\n${end}`,
		};
	return {
		type: "error",
		body: `Could not resolve this issue: ${run.error ?? "the run failed"}${prs.length ? `\n\nPull requests opened before the failure:\n${list}` : ""}\n\n${end}`,
	};
}

/** The answer to a follow-up: recorded on the run, which does not change course mid-flight. */
export function promptReply(run: Run, runUrl: string, finished: boolean): SessionActivity {
	return finished
		? {
				type: "response",
				body: `This run has finished (${run.status}); your message is recorded on it (${runUrl}). Delegate the issue to Lisa again to start a new run.`,
			}
		: {
				type: "thought",
				body: `Noted: your message is recorded on the run (${runUrl}). The run keeps its course; stop the session and delegate again to start over with new instructions.`,
			};
}
