// How SQS redrives a message that keeps failing: the same numbers for the deployed queues
// (infra/queues.ts) and the local stack's (src/local/stack.ts).
export const REDRIVE = {
	/** Receives before a message moves to the dead-letter queue. */
	maxReceiveCount: 5,
	/** Dead letters are kept for the longest SQS allows, to be looked at and re-driven. */
	dlqRetentionSeconds: 14 * 24 * 3600,
};
