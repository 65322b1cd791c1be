import type { Guardrail } from "../domain/guardrails";

/** What earlier runs in a repo learned, newest first, capped. */
export interface GuardrailStore {
	/** Stores a guardrail and drops all but the newest `keep` of the repo's. */
	addGuardrail(repo: string, entry: Guardrail, keep?: number): Promise<void>;
	guardrails(repo: string, limit?: number): Promise<Guardrail[]>;
}
