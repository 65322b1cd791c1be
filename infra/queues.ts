import { LINK } from "../src/config/links";
import { FUNCTIONS, QUEUES, visibilityTimeoutSeconds } from "./config";

// The intake and events queues (docs/how-a-run-works.md › How a run works), each with a dead-letter
// queue. Their consumers are in infra/pipeline.ts; a message that keeps failing ends in the DLQ
// where it can be inspected.

function withDeadLetters(name: string, consumerTimeoutSeconds: number) {
	const dlq = new sst.aws.Queue(`${name}Dlq`, {
		transform: { queue: { messageRetentionSeconds: QUEUES.dlqRetentionSeconds } },
	});
	const queue = new sst.aws.Queue(name, {
		visibilityTimeout: `${visibilityTimeoutSeconds(consumerTimeoutSeconds)} seconds`,
		dlq: { queue: dlq.arn, retry: QUEUES.maxReceiveCount },
	});
	return { queue, dlq };
}

export const intake = withDeadLetters("Intake", FUNCTIONS.intake.timeoutSeconds);
export const events = withDeadLetters("Events", FUNCTIONS.events.timeoutSeconds);

/** Send-only access for whoever enqueues (receiving is granted to each queue's consumer). */
const sendOnly = (name: string, queue: sst.aws.Queue) =>
	new sst.Linkable(name, {
		properties: { url: queue.url },
		include: [sst.aws.permission({ actions: ["sqs:SendMessage"], resources: [queue.arn] })],
	});

export const intakeLink = sendOnly(LINK.intakeQueue, intake.queue);
export const eventsLink = sendOnly(LINK.eventsQueue, events.queue);
