import { sqsBatchHandler } from "../queue/batch";
import { eventMessageSchema, runRequestedSchema } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { handleRunRequested } from "./intake";
import { handleEventMessage } from "./steps";

// The queue consumers, shaped like Lambda's SQS handlers: the Lambda entry points and the local
// pollers invoke exactly these.

export const intakeHandler = (deps: PipelineDeps) =>
	sqsBatchHandler(runRequestedSchema, (msg) => handleRunRequested(deps, msg), deps.log);

export const eventsHandler = (deps: PipelineDeps) =>
	sqsBatchHandler(eventMessageSchema, (msg) => handleEventMessage(deps, msg), deps.log);
