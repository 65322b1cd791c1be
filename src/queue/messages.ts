import * as z from "zod";
import { SOURCES } from "../config/schema";
import { MAX_PR_TITLE, stepChangesSchema } from "../domain/changes";
import { epicPlanSchema, epicResearchSchema } from "../domain/epic";
import { epicTaskLinkSchema } from "../domain/epic-link";
import {
	FOLLOW_UP_TRIGGERS,
	MAX_FOLLOW_UP_TEXT,
	MAX_REPLIES,
	MAX_REPLY_TEXT,
} from "../domain/follow-up";
import { issueRefSchema, runIdSchema } from "../domain/ids";
import { planSchema } from "../domain/plan";
import { TRIGGERS } from "../domain/run";
import { attemptUsageSchema } from "../domain/usage";

// Queue messages (docs/how-a-run-works.md › How a run works). Every message is validated on both
// ends. Run ids are ULIDs and issue ids, keys and the trackers' other ids are bounded printable
// text (src/domain/ids.ts): an id that could not be a store key, a path or a log line never gets
// into a message.

/** A link shown to people (dashboard, tracker): http(s) only, never javascript: or data:. */
const webUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

export const runRequestedSchema = z.object({
	type: z.literal("run.requested"),
	source: z.enum(SOURCES),
	issueId: issueRefSchema,
	issueKey: issueRefSchema.optional(),
	trigger: z.enum(TRIGGERS),
	/** The tracker's own id of the webhook delivery (informational). */
	deliveryId: issueRefSchema.optional(),
	requestedAt: z.string(),
	/** Chosen by the sender so a redelivered message resumes the same run. */
	runId: runIdSchema.optional(),
	/**
	 * `epic`: plan the issue into sub-issues (docs/epics.md › Epics); otherwise one issue, one run.
	 */
	kind: z.literal("epic").optional(),
	/** A task of an epic, started by its epic once its dependencies were done. */
	epicTask: epicTaskLinkSchema.optional(),
	/** For `retry`: the run this one retries. */
	retryOf: runIdSchema.optional(),
	/** The Linear agent session that asked for the run (the issue was delegated to Lisa). */
	agentSessionId: issueRefSchema.optional(),
	/** The mention or prompt that created the session: it goes into the run's prompt (untrusted). */
	request: z
		.object({ text: z.string().max(MAX_FOLLOW_UP_TEXT), author: z.string().max(256).optional() })
		.optional(),
});
export type RunRequested = z.infer<typeof runRequestedSchema>;

export const stepFinishedSchema = z.object({
	type: z.literal("step.finished"),
	runId: runIdSchema,
	stepIndex: z.number().int().min(0),
	attempt: z.number().int().min(1),
	outcome: z.enum(["succeeded", "failed"]),
	branch: z.string().optional(),
	prUrl: webUrl.optional(),
	/**
	 * The pull request's title and what the commit changed (docs/http-api.md › What a step changed).
	 */
	prTitle: z.string().max(MAX_PR_TITLE).optional(),
	changes: stepChangesSchema.optional(),
	error: z.string().optional(),
	transient: z.boolean().optional(),
	provider: z.string().optional(),
	/** A planning step's plan (checked again by the handler against the run's config). */
	plan: planSchema.optional(),
	/** An epic's research phase, checked (docs/epics.md › Epics). */
	research: epicResearchSchema.optional(),
	/** An epic's plan phase, checked. */
	epicPlan: epicPlanSchema.optional(),
	/** What the attempt's agents used. */
	usage: attemptUsageSchema.optional(),
	/**
	 * The task stopped its agent because the run's cost passed its limit
	 * (docs/cost.md › Cost and budgets).
	 */
	budget: z.object({ spentUsd: z.number().min(0), limitUsd: z.number().min(0) }).optional(),
	/** A follow-up round's outcome. */
	round: z
		.object({
			noChange: z.boolean().optional(),
			summary: z.string().max(MAX_FOLLOW_UP_TEXT).optional(),
			replies: z
				.array(
					z.object({
						commentId: z.number().int().positive(),
						body: z.string().min(1).max(MAX_REPLY_TEXT),
					}),
				)
				.max(MAX_REPLIES)
				.optional(),
		})
		.optional(),
});
export type StepFinished = z.infer<typeof stepFinishedSchema>;

/** A retry's backoff is over: launch the attempt (sent delayed by the events handler). */
const stepLaunchSchema = z.object({
	type: z.literal("step.launch"),
	runId: runIdSchema,
	stepIndex: z.number().int().min(0),
	attempt: z.number().int().min(2),
});
export type StepLaunch = z.infer<typeof stepLaunchSchema>;

/** Sent by the API so that only the pipeline handlers write a run's status. */
const cancelRequestedSchema = z.object({
	type: z.literal("run.cancel"),
	runId: runIdSchema,
	reason: z.string(),
	requestedAt: z.string(),
});
export type CancelRequested = z.infer<typeof cancelRequestedSchema>;

/**
 * Someone said yes to spending more on a run waiting for approval: the API's admin, a `/lisa
 * continue` comment, or the run's Linear agent session. `limitUsd` is the run's new limit.
 */
const approveRequestedSchema = z.object({
	type: z.literal("run.approve"),
	runId: runIdSchema,
	limitUsd: z.number().positive().max(1e6).optional(),
	/** Who said yes: a GitHub login, "api", or a Linear user's name (a label: `byId` says who). */
	by: z.string().min(1).max(256),
	/** The id of the Linear user who said yes in the agent session. */
	byId: issueRefSchema.optional(),
	/** Where the yes came from: "api", "github", "linear". */
	via: z.enum(["api", "github", "linear"]),
	/** The approval request it answers (`approval.requestedAt`): a late yes never approves a later request. */
	requestedAt: z.string(),
	/** The comment (or Linear session message) that said yes: it approves once, a request older than itself. */
	comment: z.object({ id: issueRefSchema, writtenAt: z.iso.datetime().optional() }).optional(),
});
export type ApproveRequested = z.infer<typeof approveRequestedSchema>;

/** The longest follow-up a message carries: what the run keeps of it. */
export const MAX_SESSION_PROMPT = 4 * 1024;

/** A follow-up written in a run's Linear agent session. */
const sessionPromptedSchema = z.object({
	type: z.literal("session.prompted"),
	runId: runIdSchema,
	activityId: issueRefSchema,
	body: z.string().max(MAX_SESSION_PROMPT),
	author: z.string().max(256).optional(),
	/** The Linear user who wrote it (the activity's own user). */
	authorId: issueRefSchema.optional(),
	/** When the message was written (the activity's `createdAt`). */
	writtenAt: z.iso.datetime().optional(),
	requestedAt: z.string(),
});
export type SessionPrompted = z.infer<typeof sessionPromptedSchema>;

/** One of a run's pull requests was closed, merged or not (GitHub's `pull_request` webhook). */
const pullRequestClosedSchema = z.object({
	type: z.literal("pr.closed"),
	runId: runIdSchema,
	prUrl: webUrl,
	merged: z.boolean(),
	at: z.string(),
	by: z.string().optional(),
	mergeCommitSha: z.string().optional(),
});
export type PullRequestClosedMessage = z.infer<typeof pullRequestClosedSchema>;

const login = z.string().min(1).max(256);

/**
 * Something on an open pull request of the run asks for a follow-up round
 * (docs/follow-ups.md › Follow-ups): a failing check, a review, a mention. `runId` is the run that
 * opened the pull request.
 */
const followUpRequestedSchema = z.object({
	type: z.literal("followup.requested"),
	runId: runIdSchema,
	trigger: z.enum(FOLLOW_UP_TRIGGERS),
	prUrl: webUrl,
	headSha: z
		.string()
		.regex(/^[0-9a-f]{40,64}$/)
		.optional(),
	reviewId: z.number().int().positive().optional(),
	author: login.optional(),
	/** GitHub's `author_association` of the author. */
	association: z.string().max(64).optional(),
	/** The Linear user who wrote a session message (`session_prompt`). */
	authorId: issueRefSchema.optional(),
	instruction: z
		.object({
			id: issueRefSchema,
			author: login.optional(),
			body: z.string().max(MAX_FOLLOW_UP_TEXT),
			via: z.enum(["comment", "review_comment", "session"]),
			writtenAt: z.iso.datetime().optional(),
		})
		.optional(),
	requestedAt: z.string(),
});
export type FollowUpRequested = z.infer<typeof followUpRequestedSchema>;

/**
 * Something changed for an epic's tasks (its plan was accepted, a task's run ended, a pull request
 * merged): create what is missing, start what is ready, update its comment (docs/epics.md › Epics).
 */
const epicAdvanceSchema = z.object({
	type: z.literal("epic.advance"),
	runId: runIdSchema,
	/** What prompted it, for the logs. */
	why: z.string().max(300),
});
export type EpicAdvance = z.infer<typeof epicAdvanceSchema>;

/** A round's debounce is over: gather it and start its run (sent delayed). */
const followUpDueSchema = z.object({
	type: z.literal("followup.due"),
	runId: runIdSchema,
	roundId: runIdSchema,
});
export type FollowUpDue = z.infer<typeof followUpDueSchema>;

export const eventMessageSchema = z.discriminatedUnion("type", [
	stepFinishedSchema,
	stepLaunchSchema,
	cancelRequestedSchema,
	approveRequestedSchema,
	sessionPromptedSchema,
	pullRequestClosedSchema,
	followUpRequestedSchema,
	followUpDueSchema,
	epicAdvanceSchema,
]);
export type EventMessage = z.infer<typeof eventMessageSchema>;

/**
 * The one way to make each message: the constructor sets its `type`, the compiler checks the rest
 * and the queue validates it again on send.
 */
function message<M extends { type: string }>(type: M["type"]) {
	return (fields: Omit<M, "type">): M => ({ type, ...fields }) as M;
}
export const runRequested = message<RunRequested>("run.requested");

/** Another request for a run's issue (a retry, a redrive): the same tracker and issue. */
export const requestAgain = (
	run: Pick<RunRequested, "source" | "issueId" | "issueKey">,
	fields: Omit<RunRequested, "type" | "source" | "issueId" | "issueKey">,
): RunRequested =>
	runRequested({ source: run.source, issueId: run.issueId, issueKey: run.issueKey, ...fields });
export const stepFinished = message<StepFinished>("step.finished");
export const stepLaunch = message<StepLaunch>("step.launch");
export const cancelRequested = message<CancelRequested>("run.cancel");
export const approveRequested = message<ApproveRequested>("run.approve");
export const sessionPrompted = message<SessionPrompted>("session.prompted");
export const pullRequestClosed = message<PullRequestClosedMessage>("pr.closed");
export const followUpRequested = message<FollowUpRequested>("followup.requested");
export const followUpDue = message<FollowUpDue>("followup.due");
export const epicAdvance = message<EpicAdvance>("epic.advance");

export const QUEUES = { intake: runRequestedSchema, events: eventMessageSchema } as const;
export type QueueName = keyof typeof QUEUES;
export type MessageOf<Q extends QueueName> = z.infer<(typeof QUEUES)[Q]>;
