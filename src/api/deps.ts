import type { SourceName } from "../config/schema";
import type { Settings } from "../config/settings";
import type { PipelineDeps } from "../pipeline/deps";
import type { SignInCodes } from "./sign-in";

/** The API reads runs and enqueues work; it never launches tasks or changes a run's status. */
export type ApiDeps = Pick<
	PipelineDeps,
	"store" | "queue" | "config" | "log" | "now" | "runUrl"
> & {
	settings: Settings;
	newRunId(): string;
	/**
	 * The id (GitHub: login) of the actor Lisa acts as in `source`, so its own changes never trigger
	 * a run; undefined when the tracker will not say. Rejects with NotConfigured when the source has
	 * no credentials.
	 */
	selfActorId(source: SourceName): Promise<string | undefined>;
	/** The dashboard's one-time sign-in codes, where a process prints them (the local stack). */
	signInCodes?: SignInCodes;
};
