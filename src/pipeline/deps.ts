import type { ConfigState } from "../config/load";
import type { SourceName } from "../config/schema";
import type { TaskSize } from "../domain/cost";
import type { RepoAccess } from "../domain/run";
import type { PullRequestFollowUps } from "../integrations/github/pulls/follow-up";
import type { Tracker } from "../integrations/tracker";
import type { Launcher } from "../launcher/launcher";
import type { Logger } from "../log";
import type { Queue } from "../queue/sqs";
import type { Store } from "../store";

/** Everything the intake, events and sweeper handlers use; built once per process. */
export interface PipelineDeps {
	store: Store;
	queue: Queue;
	launcher: Launcher;
	/** Throws NotConfigured when the source has no credentials. */
	tracker(source: SourceName): Tracker;
	/** GitHub's pull requests, for follow-up rounds; throws NotConfigured without GITHUB_TOKEN. */
	pulls(): PullRequestFollowUps;
	config(): ConfigState;
	log: Logger;
	now(): Date;
	/** The run's page on the dashboard (also reachable through the API). */
	runUrl(runId: string): string;
	/**
	 * With a GitHub App: a token for one attempt's repositories (their `owner/name`), held to what
	 * the step does there (docs/trackers.md › As a GitHub App (a token per step)). Undefined with a
	 * personal token, which tasks get as is.
	 */
	mintStepToken?(
		slugs: string[],
		access: RepoAccess,
	): Promise<{ token: string; expiresAt: string }>;
	/** The agent task's size on Fargate, priced as compute; undefined locally (compute is free). */
	taskSize?: TaskSize;
}
