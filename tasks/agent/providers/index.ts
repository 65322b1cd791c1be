import type { ProviderName } from "../../../shared/config/schema";
import { builtin } from "./builtin";
import { claude, codex, gemini, opencode } from "./cli";
import type { Provider } from "./provider";

export const PROVIDERS: Record<ProviderName, Provider> = {
	claude,
	gemini,
	opencode,
	codex,
	builtin,
};
