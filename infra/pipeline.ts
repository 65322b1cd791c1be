import { STARTED_BY_PREFIX } from "../src/config/links";
import { agentLink, cluster } from "./agent";
import { publicUrl } from "./api";
import { BUNDLED_CONFIG, deployConfig, FUNCTIONS } from "./config";
import { events, intake } from "./queues";
import { trackerSecrets } from "./secrets";
import { tableLink } from "./storage";

// The pipeline handlers: the intake and events queue consumers (partial batch responses: only the
// failed records come back) and the ECS task-state rule that catches crashed agent tasks.

const config = deployConfig(process.env);

/** Every handler reads and writes runs, starts and stops tasks, and updates the tracker. */
export const handlerLinks = [tableLink, agentLink, ...trackerSecrets];
export const handlerEnvironment = { LISA_PUBLIC_URL: publicUrl, LOG_LEVEL: config.logLevel };

intake.queue.subscribe(
	{
		handler: "src/functions/intake.handler",
		timeout: `${FUNCTIONS.intake.timeoutSeconds} seconds`,
		memory: `${FUNCTIONS.intake.memoryMb} MB`,
		link: handlerLinks,
		// Intake plans runs from the Lisa config; later handlers use the run's snapshot of it.
		copyFiles: [{ from: config.configFile, to: BUNDLED_CONFIG }],
		environment: { ...handlerEnvironment, LISA_CONFIG: BUNDLED_CONFIG },
	},
	{ batch: { size: FUNCTIONS.intake.batchSize, partialResponses: true } },
);

events.queue.subscribe(
	{
		handler: "src/functions/events.handler",
		timeout: `${FUNCTIONS.events.timeoutSeconds} seconds`,
		memory: `${FUNCTIONS.events.memoryMb} MB`,
		link: handlerLinks,
		environment: handlerEnvironment,
	},
	{ batch: { size: FUNCTIONS.events.batchSize, partialResponses: true } },
);

/** ECS publishes every task state change of the account on the default bus. */
const defaultBus = $interpolate`arn:${aws.getPartitionOutput().partition}:events:${aws.getRegionOutput().region}:${aws.getCallerIdentityOutput().accountId}:event-bus/default`;

sst.aws.Bus.subscribe(
	"AgentStopped",
	defaultBus,
	{
		handler: "src/functions/ecs-events.handler",
		timeout: `${FUNCTIONS.ecsEvents.timeoutSeconds} seconds`,
		memory: `${FUNCTIONS.ecsEvents.memoryMb} MB`,
		link: handlerLinks,
		environment: handlerEnvironment,
	},
	{
		pattern: cluster.nodes.cluster.arn.apply((clusterArn) => ({
			source: ["aws.ecs"],
			detailType: ["ECS Task State Change"],
			detail: {
				clusterArn: [clusterArn],
				lastStatus: ["STOPPED"],
				startedBy: [{ prefix: STARTED_BY_PREFIX }],
			},
		})),
	},
);
