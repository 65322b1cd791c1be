import { isContinue } from "../domain/budget";
import { prUrls, type Run } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import { promptReply } from "../integrations/linear/session";
import { addPrompt } from "../integrations/linear/session-prompts";
import type { SessionPrompted } from "../queue/messages";
import { approveFrom } from "./approve";
import type { PipelineDeps } from "./deps";
import { handleFollowUpRequested, originalRun } from "./follow-up";
import { mutate, note } from "./mutate";
import { replyInSession } from "./report";

/**
 * `session.prompted`: a follow-up in the run's Linear agent session is recorded and answered. Once
 * the run has finished with an open pull request, the message starts a follow-up round on it
 * (README › Follow-ups).
 */
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
	if (!res) return;
	const { run, changed } = res;
	if (changed)
		await note(
			deps,
			run.runId,
			"session.prompted",
			`${msg.author ?? "someone"} wrote in the agent session: ${msg.body.slice(0, 200)}`,
		);
	// The session was asked whether to spend more (README › Cost and budgets).
	if (run.status === "awaiting_approval" && isContinue(msg.body, true)) {
		if (changed) await approveFrom(deps, run, msg.author ?? "someone", "linear");
		return;
	}
	// Also on a redelivery: the round may not have been asked for yet (it is asked for once).
	const prUrl = isTerminalRun(run.status) ? await openPullRequest(deps, run) : undefined;
	const kind =
		prUrl &&
		(await handleFollowUpRequested(deps, {
			runId: run.runId,
			trigger: "session_prompt",
			prUrl,
			...(msg.author ? { author: msg.author } : {}),
			instruction: {
				id: msg.activityId,
				body: msg.body,
				via: "session",
				...(msg.author ? { author: msg.author } : {}),
			},
			requestedAt: msg.requestedAt,
		}));
	if (!changed) return;
	if (prUrl && kind === "add")
		await replyInSession(deps, run, {
			type: "thought",
			body: `Following up on ${prUrl} with your message: a new round starts shortly (${deps.runUrl(run.runId)}).`,
		});
	else
		await replyInSession(
			deps,
			run,
			promptReply(run, deps.runUrl(run.runId), isTerminalRun(run.status)),
		);
}

/** The first pull request the session's original run opened that is still open, if any. */
async function openPullRequest(deps: PipelineDeps, run: Run): Promise<string | undefined> {
	const original = await originalRun(deps, run.runId);
	if (!original) return undefined;
	const closed = new Set((original.closedPullRequests ?? []).map((p) => p.url));
	return prUrls(original).find((u) => !closed.has(u));
}
