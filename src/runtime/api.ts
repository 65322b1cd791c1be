import type { ApiDeps } from "../api/deps";
import { cachedConfig } from "../config/cached";
import type { SourceName } from "../config/schema";
import type { Settings } from "../config/settings";
import { newRunId } from "../domain/ids";
import { gitHubLogin } from "../integrations/github/actor";
import { linearViewerId } from "../integrations/linear/actor";
import { NotConfigured } from "../integrations/tracker";
import { trelloMemberId } from "../integrations/trello/actor";
import { createLogger, type Logger } from "../log";
import { type DynamoStore, storeAndQueue } from "./aws";

// The API's wiring: the store, the queue and Lisa's own actor per source. It imports no launcher
// and no tracker client, so the API's bundle holds neither
// (docs/architecture.md › Things that bite); ./deps.ts adds them for the handlers.

/** Each source's credentials; NotConfigured when they are missing. */
export const credentials = {
	linear(settings: Settings) {
		const { apiKey, apiUrl } = settings.linear;
		if (!apiKey) throw new NotConfigured("LINEAR_API_KEY is not set");
		return { apiKey, apiUrl };
	},
	trello(settings: Settings) {
		const { apiKey, token, apiUrl } = settings.trello;
		if (!apiKey || !token) throw new NotConfigured("TRELLO_API_KEY and TRELLO_TOKEN must be set");
		return { auth: { apiKey, token }, apiUrl };
	},
	/** The App when it is set up, else the token. */
	github(settings: Settings) {
		const { token, app, apiUrl, botLogin } = settings.github;
		const auth = app ?? token;
		if (!auth) throw new NotConfigured("GITHUB_TOKEN (or a GitHub App: GITHUB_APP_*) is not set");
		return { auth, apiUrl, botLogin };
	},
};

/** Lisa's own actor per source, looked up once; a failed lookup is not kept, the next event asks again. */
export function selfActors(settings: Settings): ApiDeps["selfActorId"] {
	const found = new Map<SourceName, Promise<string | undefined>>();
	const lookup = (source: SourceName): Promise<string | undefined> => {
		switch (source) {
			case "linear": {
				const { apiKey, apiUrl } = credentials.linear(settings);
				return linearViewerId(apiKey, apiUrl);
			}
			case "trello": {
				const { auth, apiUrl } = credentials.trello(settings);
				return trelloMemberId(auth, apiUrl);
			}
			case "github": {
				const { auth, apiUrl, botLogin } = credentials.github(settings);
				return botLogin ? Promise.resolve(botLogin) : gitHubLogin(auth, apiUrl);
			}
		}
	};
	return async (source) => {
		let self = found.get(source);
		if (!self) {
			const asked = lookup(source);
			asked.catch(() => {
				if (found.get(source) === asked) found.delete(source);
			});
			found.set(source, asked);
			self = asked;
		}
		return self;
	};
}

function baseUrl(settings: Settings): string {
	return settings.publicUrl ?? `http://127.0.0.1:${settings.port}`;
}

/** The API's dependencies; the store keeps its request observer for tests and benches. */
export type ApiRuntimeDeps = ApiDeps & { store: DynamoStore };

export function apiDeps(settings: Settings, opts: { log?: Logger } = {}): ApiRuntimeDeps {
	const base = baseUrl(settings);
	return {
		settings,
		...storeAndQueue(settings),
		config: cachedConfig(settings.configPath),
		selfActorId: selfActors(settings),
		log: opts.log ?? createLogger("lisa"),
		now: () => new Date(),
		newRunId: () => newRunId(),
		runUrl: (runId) => `${base}/runs/${runId}`,
	};
}
