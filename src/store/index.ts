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

export type { CoordinationStore } from "./coordination";
export type { DeliveryStore } from "./deliveries";
export { InvalidCursor, VersionConflict } from "./errors";
export type { GuardrailStore } from "./guardrails";
export type { PullRequestStore } from "./pull-requests";
export type { Page, RunFilter, RunStore, TaskStepFields } from "./runs";
export type { DaySpend, SpendStore } from "./spend";
export type { StatsStore } from "./stats";
export type { AttemptKey, StepTokenStore } from "./step-tokens";
export type { RunEvent, TimelineStore } from "./timeline";

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
