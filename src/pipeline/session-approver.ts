import type { Run } from "../domain/run";
import { approverRefusal } from "../domain/session-approver";
import { NotConfigured, TrackerError } from "../integrations/tracker";
import type { PipelineDeps } from "./deps";

/** Who said yes, as an approval records them (`byId`: a Linear user's), or why they may not approve. */
export type ApproverVerdict = { by: string; byId?: string } | { refused: string };

/**
 * The author of a `continue` in the run's Linear agent session, asked of Linear now: only an active
 * member of the issue's team, neither a guest nor an app, may approve spending
 * (docs/cost.md › Cost and budgets). A transient failure throws, to be retried; anything else
 * refuses, saying why.
 */
export async function sessionApprover(
	deps: PipelineDeps,
	run: Run,
	author: { id?: string; name?: string },
): Promise<ApproverVerdict> {
	const who = author.name ?? "someone";
	if (!author.id) return { refused: `Linear did not say which user ${who} is` };
	try {
		const sessions = deps.tracker(run.source).sessions;
		if (!sessions) return { refused: `${run.source} has no agent sessions` };
		const user = await sessions.author(author.id, run.issue?.id ?? run.issueId);
		const refused = approverRefusal(user);
		return refused ? { refused } : { by: user.name, byId: user.id };
	} catch (err) {
		if (err instanceof TrackerError && err.transient) throw err;
		if (!(err instanceof TrackerError || err instanceof NotConfigured)) throw err;
		return { refused: `${who} could not be checked: ${err.message}` };
	}
}
