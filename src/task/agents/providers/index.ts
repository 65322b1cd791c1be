import type { ProviderName } from "../../../config/schema";
import { builtin } from "./builtin";
import { claude } from "./claude";
import { codex } from "./codex";
import { gemini } from "./gemini";
import { opencode } from "./opencode";
import type { Provider } from "./provider";

export const PROVIDERS: Record<ProviderName, Provider> = {
	claude,
	gemini,
	opencode,
	codex,
	builtin,
};
