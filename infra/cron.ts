import { FUNCTIONS, SWEEP_SCHEDULE } from "./config";
import { handlerEnvironment, handlerLinks } from "./pipeline";
import { intakeLink } from "./queues";

// The sweeper (src/pipeline/sweeper.ts): re-drives lost requests, applies stored reports whose
// message was lost, fails steps whose task died silently or timed out, and finishes tracker updates.

export const sweeper = new sst.aws.CronV2("Sweeper", {
	schedule: SWEEP_SCHEDULE,
	function: {
		handler: "src/functions/sweeper.handler",
		timeout: `${FUNCTIONS.sweeper.timeoutSeconds} seconds`,
		memory: `${FUNCTIONS.sweeper.memoryMb} MB`,
		// Re-driving a lost request sends it to the intake queue again.
		link: [...handlerLinks, intakeLink],
		environment: handlerEnvironment,
		// One sweep at a time: a slow pass is never overlapped by the next minute's.
		concurrency: { reserved: 1 },
	},
	// A missed minute is covered by the next one.
	retries: 0,
});
