import { sqsBatchHandler } from "../queue/batch";
import { type EventMessage, eventMessageSchema, runRequestedSchema } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { handleRunRequested } from "./intake";
import { handlePullRequestClosed } from "./merge";
import { handleSessionPrompted } from "./session";
import { handleCancel, handleStepFinished, handleStepLaunch } from "./steps";

// The queue consumers, shaped like Lambda's SQS handlers: the Lambda entry points and the local
// pollers invoke exactly these.

export const intakeHandler = (deps: PipelineDeps) =>
	sqsBatchHandler(runRequestedSchema, (msg) => handleRunRequested(deps, msg), deps.log);

function handleEventMessage(deps: PipelineDeps, msg: EventMessage): Promise<void> {
	switch (msg.type) {
		case "step.finished":
			return handleStepFinished(deps, msg);
		case "step.launch":
			return handleStepLaunch(deps, msg);
		case "run.cancel":
			return handleCancel(deps, msg);
		case "session.prompted":
			return handleSessionPrompted(deps, msg);
		case "pr.closed":
			return handlePullRequestClosed(deps, msg);
	}
}

export const eventsHandler = (deps: PipelineDeps) =>
	sqsBatchHandler(eventMessageSchema, (msg) => handleEventMessage(deps, msg), deps.log);
