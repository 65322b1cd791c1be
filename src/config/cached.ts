import { statSync } from "node:fs";
import { type ConfigState, loadConfig } from "./load";

/** Loads the config once and again only when the file changes, so edits apply without a restart. */
export function cachedConfig(file: string): () => ConfigState {
	let state: ConfigState | undefined;
	let stamp = "";
	return () => {
		let now = "missing";
		try {
			const s = statSync(file);
			now = `${s.mtimeMs}:${s.size}`;
		} catch {}
		if (!state || now !== stamp) {
			state = loadConfig(file);
			stamp = now;
		}
		return state;
	};
}
