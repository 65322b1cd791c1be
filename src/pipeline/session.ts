import { isContinue } from "../domain/commands";
import { prUrls, type Run } from "../domain/run";
import { promptReply } from "../domain/session-activity";
import { addPrompt } from "../domain/session-prompts";
import { isTerminalRun } from "../domain/states";
import type { SessionPrompted } from "../queue/messages";
import { approveFrom } from "./approve";
import type { PipelineDeps } from "./deps";
import { handleFollowUpRequested, originalRun } from "./follow-up";
import { mutate, note } from "./mutate";
import { replyInSession } from "./report";
import { sessionApprover } from "./session-approver";

/**
 * `session.prompted`: a follow-up in the run's Linear agent session is recorded and answered. Once
 * the run has finished with an open pull request, the message starts a follow-up round on it
 * (docs/follow-ups.md › Follow-ups).
 */
export async function handleSessionPrompted(
	deps: PipelineDeps,
	msg: SessionPrompted,
): Promise<void> {
	// Linear is asked who may approve before the message is recorded: a failure to ask retries it whole.
	const asked = isContinue(msg.body, true) ? await deps.store.getRun(msg.runId) : undefined;
	const early =
		asked?.status === "awaiting_approval"
			? await sessionApprover(deps, asked, authorOf(msg))
			: undefined;
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
	// The session was asked whether to spend more (docs/cost.md › Cost and budgets). Also on a
	// redelivery: the approval may not have been sent yet, and one message approves once.
	if (run.status === "awaiting_approval" && isContinue(msg.body, true)) {
		const approver = early ?? (await sessionApprover(deps, run, authorOf(msg)));
		if (!("refused" in approver))
			await approveFrom(
				deps,
				run,
				approver.by,
				"linear",
				{ id: msg.activityId, writtenAt: msg.writtenAt },
				approver.byId,
			);
		else if (changed) await refuseInSession(deps, run, msg, approver.refused);
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
			...(msg.authorId ? { authorId: msg.authorId } : {}),
			instruction: {
				id: msg.activityId,
				body: msg.body,
				via: "session",
				...(msg.author ? { author: msg.author } : {}),
				...(msg.writtenAt ? { writtenAt: msg.writtenAt } : {}),
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

const authorOf = (msg: SessionPrompted) => ({ id: msg.authorId, name: msg.author });

/** A `continue` in the session from someone who may not approve: noted, and said why. */
async function refuseInSession(
	deps: PipelineDeps,
	run: Run,
	msg: SessionPrompted,
	refused: string,
): Promise<void> {
	const who = msg.author ?? "someone";
	await note(deps, run.runId, "approval.ignored", `\`continue\` by ${who}: ${refused}`, {
		data: { authorId: msg.authorId },
	});
	await replyInSession(deps, run, {
		type: "thought",
		body: `Not approved: ${refused}. Only an active member of the issue's team who is not a guest can approve spending here; the dashboard can too, with the admin token.`,
	});
}

/** The first pull request the session's original run opened that is still open, if any. */
async function openPullRequest(deps: PipelineDeps, run: Run): Promise<string | undefined> {
	const original = await originalRun(deps, run.runId);
	if (!original) return undefined;
	const closed = new Set((original.closedPullRequests ?? []).map((p) => p.url));
	return prUrls(original).find((u) => !closed.has(u));
}
