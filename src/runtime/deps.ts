import type { ApiDeps } from "../api/deps";
import { cachedConfig } from "../config/cached";
import type { ConfigState } from "../config/load";
import type { SourceName } from "../config/schema";
import type { Settings } from "../config/settings";
import { newRunId } from "../domain/ids";
import { gitHubIssuesRepo } from "../domain/workflow";
import { GitHubTracker } from "../integrations/github/issues";
import { LinearTracker } from "../integrations/linear/client";
import { NotConfigured, type Tracker } from "../integrations/tracker";
import { TrelloTracker } from "../integrations/trello/client";
import type { Launcher } from "../launcher/launcher";
import { createLogger, type Logger } from "../log";
import type { PipelineDeps } from "../pipeline/deps";
import { type DynamoStore, storeAndQueue } from "./aws";

// Wiring: the same adapters for Lambda and the local stack; only the endpoints and launcher differ.

/** One adapter per source, made on first use; NotConfigured when its credentials are missing. */
export function trackerFactory(
	settings: Settings,
	config: () => ConfigState,
): (source: SourceName) => Tracker {
	const made = new Map<SourceName, Tracker>();
	const make = (source: SourceName): Tracker => {
		switch (source) {
			case "linear":
				if (!settings.linear.apiKey) throw new NotConfigured("LINEAR_API_KEY is not set");
				return LinearTracker.fromEnv(settings.linear.apiKey, settings.linear.apiUrl);
			case "trello": {
				const { apiKey, token, apiUrl } = settings.trello;
				if (!apiKey || !token)
					throw new NotConfigured("TRELLO_API_KEY and TRELLO_TOKEN must be set");
				return new TrelloTracker({ apiKey, token }, apiUrl);
			}
			case "github": {
				if (!settings.github.token) throw new NotConfigured("GITHUB_TOKEN is not set");
				return GitHubTracker.fromEnv(settings.github.token, settings.github.apiUrl, {
					botLogin: settings.github.botLogin,
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

export function baseUrl(settings: Settings): string {
	return settings.publicUrl ?? `http://127.0.0.1:${settings.port}`;
}

/** The handlers' and the API's wiring; the store keeps its request observer for tests and benches. */
export type RuntimeDeps = PipelineDeps & ApiDeps & { store: DynamoStore };

export function createDeps(
	settings: Settings,
	opts: { launcher: Launcher; log?: Logger },
): RuntimeDeps {
	const base = baseUrl(settings);
	const config = cachedConfig(settings.configPath);
	return {
		settings,
		...storeAndQueue(settings),
		launcher: opts.launcher,
		tracker: trackerFactory(settings, config),
		config,
		log: opts.log ?? createLogger("lisa"),
		now: () => new Date(),
		newRunId: () => newRunId(),
		runUrl: (runId) => `${base}/runs/${runId}`,
	};
}
