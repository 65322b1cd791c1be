import { z } from "zod";
import { SOURCES } from "../config/schema";

// Queue messages (DESIGN §8). Every message is validated on both ends.

export const runRequestedSchema = z.object({
	type: z.literal("run.requested"),
	source: z.enum(SOURCES),
	issueId: z.string().min(1),
	issueKey: z.string().optional(),
	trigger: z.enum(["webhook", "poll", "api", "retry"]),
	deliveryId: z.string().optional(),
	requestedAt: z.string(),
	/** Chosen by the sender so a redelivered message resumes the same run. */
	runId: z.string().min(1).optional(),
	/** For `retry`: the run this one retries. */
	retryOf: z.string().optional(),
});
export type RunRequested = z.infer<typeof runRequestedSchema>;

export const stepFinishedSchema = z.object({
	type: z.literal("step.finished"),
	runId: z.string().min(1),
	stepIndex: z.number().int().min(0),
	attempt: z.number().int().min(1),
	outcome: z.enum(["succeeded", "failed"]),
	branch: z.string().optional(),
	prUrl: z.string().optional(),
	error: z.string().optional(),
	transient: z.boolean().optional(),
	provider: z.string().optional(),
});
export type StepFinished = z.infer<typeof stepFinishedSchema>;

/** Sent by the API so that only the pipeline handlers write a run's status. */
export const cancelRequestedSchema = z.object({
	type: z.literal("run.cancel"),
	runId: z.string().min(1),
	reason: z.string(),
	requestedAt: z.string(),
});
export type CancelRequested = z.infer<typeof cancelRequestedSchema>;

export const eventMessageSchema = z.discriminatedUnion("type", [
	stepFinishedSchema,
	cancelRequestedSchema,
]);
export type EventMessage = z.infer<typeof eventMessageSchema>;

export const QUEUES = { intake: runRequestedSchema, events: eventMessageSchema } as const;
export type QueueName = keyof typeof QUEUES;
export type MessageOf<Q extends QueueName> = z.infer<(typeof QUEUES)[Q]>;
