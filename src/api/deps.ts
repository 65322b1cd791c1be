import type { Settings } from "../config/settings";
import type { PipelineDeps } from "../pipeline/deps";

/** The API reads runs and enqueues work; it never launches tasks or changes a run's status. */
export type ApiDeps = Pick<
	PipelineDeps,
	"store" | "queue" | "tracker" | "config" | "log" | "now" | "runUrl"
> & {
	settings: Settings;
	newRunId(): string;
};
