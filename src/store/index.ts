// The store port: what the pipeline, the API and the agent task need from storage. The DynamoDB
// adapter (./dynamo) implements it; nothing outside src/store and src/runtime names the adapter.
import type { CoordinationStore } from "./coordination";
import type { DeliveryStore } from "./deliveries";
import type { GuardrailStore } from "./guardrails";
import type { PullRequestStore } from "./pull-requests";
import type { RunStore } from "./runs";
import type { SpendStore } from "./spend";
import type { StatsStore } from "./stats";
import type { StepTokenStore } from "./step-tokens";
import type { TimelineStore } from "./timeline";

export { InvalidCursor, VersionConflict } from "./errors";
export type { TaskStepFields } from "./runs";
export type { RunEvent } from "./timeline";

/** Everything the pipeline and the API use. */
export type Store = RunStore &
	TimelineStore &
	GuardrailStore &
	CoordinationStore &
	DeliveryStore &
	PullRequestStore &
	SpendStore &
	StatsStore &
	StepTokenStore;

/** The part the agent task's IAM role allows (infra/agent.ts): its step, the timeline, guardrails, its token. */
export type TaskStore = Pick<RunStore, "getRun" | "updateStepFields"> &
	Pick<TimelineStore, "appendEvent"> &
	GuardrailStore &
	Pick<StepTokenStore, "takeStepToken">;
