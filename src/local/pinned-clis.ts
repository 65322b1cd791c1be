import path from "node:path";
import { fileURLToPath } from "node:url";

/** The pinned agent CLIs `npm install` puts in agents/: after the user's own on PATH. */
export const PINNED_CLIS = fileURLToPath(
	new URL("../../agents/node_modules/.bin", import.meta.url),
);

/** The PATH the local stack gives its tasks: the user's, then the pinned CLIs. */
export const withPinnedClis = <E extends Record<string, string | undefined>>(
	env: E,
	pinned = PINNED_CLIS,
): E => ({
	...env,
	PATH: env.PATH ? `${env.PATH}${path.delimiter}${pinned}` : pinned,
});
