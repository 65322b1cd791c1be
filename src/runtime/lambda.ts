import { readSettings, withLinks } from "../config/settings";
import { createLogger } from "../log";
import { type ApiRuntimeDeps, apiDeps } from "./api";

// Wiring for the Lambda entry points: built on the first invocation and kept for the container's
// life. Settings and secrets come from what infra/ links to the function (src/config/settings.ts).
// This module is the API's: the handlers' wiring, with the launcher and the tracker clients, is
// ./lambda-pipeline.ts, so the API's bundle holds none of it (docs/architecture.md › Things that bite).

let deps: ApiRuntimeDeps | undefined;

/** Linked secrets are not in process.env: the logger is given them so it redacts them. */
export const lambdaLogger = () => createLogger("lisa", withLinks());

export function lambdaApiDeps(): ApiRuntimeDeps {
	deps ??= apiDeps(readSettings(), { log: lambdaLogger() });
	return deps;
}

/** A handler built on its first call, so importing an entry point reads no settings. */
export function lazy<A extends unknown[], R>(build: () => (...args: A) => R): (...args: A) => R {
	let built: ((...args: A) => R) | undefined;
	return (...args) => {
		built ??= build();
		return built(...args);
	};
}
