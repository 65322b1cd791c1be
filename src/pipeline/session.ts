import { isTerminalRun } from "../domain/states";
import { promptReply } from "../integrations/linear/session";
import { addPrompt } from "../integrations/linear/session-prompts";
import type { SessionPrompted } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { mutate, note } from "./mutate";
import { replyInSession } from "./report";

/** `session.prompted`: a follow-up in the run's Linear agent session is recorded and answered. */
export async function handleSessionPrompted(
	deps: PipelineDeps,
	msg: SessionPrompted,
): Promise<void> {
	const res = await mutate(deps, msg.runId, (run) => {
		const added = addPrompt(run, {
			id: msg.activityId,
			body: msg.body,
			at: msg.requestedAt,
			...(msg.author ? { author: msg.author } : {}),
		});
		return added ? { patch: { set: added } } : {};
	});
	if (!res?.changed) return;
	const { run } = res;
	await note(
		deps,
		run.runId,
		"session.prompted",
		`${msg.author ?? "someone"} wrote in the agent session: ${msg.body.slice(0, 200)}`,
	);
	await replyInSession(
		deps,
		run,
		promptReply(run, deps.runUrl(run.runId), isTerminalRun(run.status)),
	);
}
