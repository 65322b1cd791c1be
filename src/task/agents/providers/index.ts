import type { ProviderName } from "../../../config/schema";
import type { Provider } from "../provider";
import { builtin } from "./builtin";
import { claude } from "./claude";
import { CliProvider, type CliSpec } from "./cli-provider";
import { codex } from "./codex";
import { gemini } from "./gemini";
import { opencode } from "./opencode";

export const PROVIDERS: Record<ProviderName, Provider> = {
	claude,
	gemini,
	opencode,
	codex,
	builtin,
};

/** The agent CLIs among the providers (all but the built-in agent): what the image and the tests check. */
export const CLI_SPECS: readonly CliSpec[] = Object.values(PROVIDERS).flatMap((p) =>
	p instanceof CliProvider ? [p.spec] : [],
);
