import { failureText, type GivingUp, sqsBatchHandler } from "../queue/batch";
import { type EventMessage, eventMessageSchema, runRequestedSchema } from "../queue/messages";
import { handleApprove } from "./approve";
import type { PipelineDeps } from "./deps";
import { handleEpicAdvance } from "./epic";
import { failForGood } from "./finalize";
import { handleFollowUpDue, handleFollowUpRequested } from "./follow-up";
import { handleRunRequested } from "./intake";
import { handlePullRequestClosed } from "./merge";
import { note } from "./mutate";
import { handleSessionPrompted } from "./session";
import { handleCancel, handleStepFinished, handleStepLaunch } from "./steps";

// The queue consumers, shaped like Lambda's SQS handlers: the Lambda entry points and the local
// pollers invoke exactly these.

/** Longest reason a dropped message leaves on its run. */
const MAX_REASON = 500;

/**
 * What a message Lisa gives up on leaves behind: a note on its run when it could not even be read,
 * and a failed run (said on its timeline and, through finalize, in the tracker) when handling it
 * failed for good. Either way the message is not delivered again.
 */
function givingUp(deps: PipelineDeps, queue: string): GivingUp {
	return {
		async invalid(runId, reason) {
			if (!(await deps.store.getRun(runId))) return;
			await note(
				deps,
				runId,
				"message.dropped",
				`a message for this run on the ${queue} queue was invalid and dropped: ${reason.slice(0, MAX_REASON)}`,
			);
		},
		async failed(message, err) {
			const runId = (message as { runId?: string }).runId;
			if (!runId) return;
			const type = (message as { type?: string }).type ?? "message";
			// A follow-up is about the run's pull request, not the run: the run stays as it ended.
			if (type.startsWith("followup."))
				return note(
					deps,
					runId,
					"message.dropped",
					`${type} failed for good: ${failureText(err)}`.slice(0, MAX_REASON),
				);
			await failForGood(
				deps,
				runId,
				`${type} failed for good: ${failureText(err)}`.slice(0, MAX_REASON),
			);
		},
	};
}

export const intakeHandler = (deps: PipelineDeps) =>
	sqsBatchHandler(
		runRequestedSchema,
		(msg) => handleRunRequested(deps, msg),
		deps.log,
		givingUp(deps, "intake"),
	);

function handleEventMessage(deps: PipelineDeps, msg: EventMessage): Promise<void> {
	switch (msg.type) {
		case "step.finished":
			return handleStepFinished(deps, msg);
		case "step.launch":
			return handleStepLaunch(deps, msg);
		case "run.cancel":
			return handleCancel(deps, msg);
		case "run.approve":
			return handleApprove(deps, msg);
		case "session.prompted":
			return handleSessionPrompted(deps, msg);
		case "pr.closed":
			return handlePullRequestClosed(deps, msg);
		case "followup.requested":
			return handleFollowUpRequested(deps, msg).then(() => undefined);
		case "followup.due":
			return handleFollowUpDue(deps, msg);
		case "epic.advance":
			return handleEpicAdvance(deps, msg);
	}
}

export const eventsHandler = (deps: PipelineDeps) =>
	sqsBatchHandler(
		eventMessageSchema,
		(msg) => handleEventMessage(deps, msg),
		deps.log,
		givingUp(deps, "events"),
	);
