import type { ApiDeps } from "../api/deps";
import type { ConfigState } from "../config/load";
import type { SourceName } from "../config/schema";
import type { Settings } from "../config/settings";
import { gitHubIssuesRepo } from "../domain/workflow";
import { mintStepToken } from "../integrations/github/app";
import { GitHubTracker } from "../integrations/github/issues";
import { gitHubFollowUps } from "../integrations/github/pulls/client";
import type { PullRequestFollowUps } from "../integrations/github/pulls/follow-up";
import { LinearTracker } from "../integrations/linear/client";
import type { Tracker } from "../integrations/tracker";
import { TrelloTracker } from "../integrations/trello/client";
import type { Launcher } from "../launcher/launcher";
import type { Logger } from "../log";
import type { PipelineDeps } from "../pipeline/deps";
import { apiDeps, credentials } from "./api";
import type { DynamoStore } from "./aws";

// Wiring: the same adapters for Lambda and the local stack; only the endpoints and launcher differ.
// The API's part is ./api.ts; the handlers add the launcher and the tracker clients.

/** One adapter per source, made on first use; NotConfigured when its credentials are missing. */
export function trackerFactory(
	settings: Settings,
	config: () => ConfigState,
): (source: SourceName) => Tracker {
	const made = new Map<SourceName, Tracker>();
	const make = (source: SourceName): Tracker => {
		switch (source) {
			case "linear": {
				const { apiKey, apiUrl } = credentials.linear(settings);
				return LinearTracker.fromEnv(apiKey, apiUrl);
			}
			case "trello": {
				const { auth, apiUrl } = credentials.trello(settings);
				return new TrelloTracker(auth, apiUrl);
			}
			case "github": {
				const { auth, apiUrl } = credentials.github(settings);
				return GitHubTracker.fromEnv(auth, apiUrl, {
					defaultRepo: () => {
						const state = config();
						return state.status === "ok" ? gitHubIssuesRepo(state.config) : undefined;
					},
				});
			}
		}
	};
	return (source) => {
		let tracker = made.get(source);
		if (!tracker) {
			tracker = make(source);
			made.set(source, tracker);
		}
		return tracker;
	};
}

/** The handlers' and the API's wiring; the store keeps its request observer for tests and benches. */
export type RuntimeDeps = PipelineDeps & ApiDeps & { store: DynamoStore };

export function createDeps(
	settings: Settings,
	opts: { launcher: Launcher; log?: Logger },
): RuntimeDeps {
	const api = apiDeps(settings, { log: opts.log });
	let pulls: PullRequestFollowUps | undefined;
	const { app, apiUrl } = settings.github;
	return {
		...api,
		launcher: opts.launcher,
		...(app ? { mintStepToken: (slugs, access) => mintStepToken(app, apiUrl, slugs, access) } : {}),
		...(settings.launcher === "ecs" && settings.ecs?.size ? { taskSize: settings.ecs.size } : {}),
		tracker: trackerFactory(settings, api.config),
		pulls: () => {
			if (!pulls) {
				const { auth, apiUrl } = credentials.github(settings);
				pulls = gitHubFollowUps(auth, apiUrl);
			}
			return pulls;
		},
	};
}
