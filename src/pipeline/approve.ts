import { commentRefusal } from "../domain/budget";
import { usd } from "../domain/cost";
import type { Approval, Run } from "../domain/run";
import { nextRunStatus } from "../domain/states";
import { type ApproveRequested, approveRequested } from "../queue/messages";
import type { PipelineDeps } from "./deps";
import { mutate, note } from "./mutate";
import { claimLaunch, startTask } from "./steps";

// Yes to spending more on a run paused at its cost limit (docs/cost.md › Cost and budgets).

/**
 * `run.approve`: the run goes on up to its new limit, the steps that waited are launched. A yes
 * given for an earlier request (a late comment) approves nothing; a redelivery launches what the
 * first delivery did not.
 */
export async function handleApprove(deps: PipelineDeps, msg: ApproveRequested): Promise<void> {
	const now = deps.now().toISOString();
	const res = await mutate(deps, msg.runId, (r) => {
		const request = r.approval;
		if (r.status !== "awaiting_approval" || request?.requestedAt !== msg.requestedAt) return {};
		const refused = msg.comment && commentRefusal(request, r.approvals ?? [], msg.comment);
		if (refused) return { refused };
		const limitUsd = msg.limitUsd ?? request.proposedLimitUsd;
		if (limitUsd <= request.spentUsd) return {};
		const approval: Approval = {
			by: msg.by,
			...(msg.byId ? { byId: msg.byId } : {}),
			via: msg.via,
			at: now,
			limitUsd,
			spentUsd: request.spentUsd,
			requestedAt: request.requestedAt,
			steps: request.steps,
			...(msg.comment ? { commentId: msg.comment.id } : {}),
		};
		return {
			patch: {
				set: {
					status: nextRunStatus(r.status, request.resume === "planning" ? "plan" : "start"),
					limitUsd,
					approval: undefined,
					approvals: [...(r.approvals ?? []), approval],
				},
			},
		};
	});
	if (!res) return;
	const done = res.run.approvals?.find((a) => a.requestedAt === msg.requestedAt);
	if (!done) {
		const why = res.decision.refused ?? `answers no pending request: the run is ${res.run.status}`;
		await note(deps, msg.runId, "approval.ignored", `${msg.by}'s approval (${msg.via}) ${why}`);
		return;
	}
	if (res.changed) {
		await note(
			deps,
			msg.runId,
			"run.approved",
			`${msg.by} approved (${msg.via}): the run may spend up to ${usd(done.limitUsd)}`,
			{ data: { ...done } },
		);
		// The pull request's next rounds share the raised limit.
		if (res.run.parentRunId)
			await mutate(deps, res.run.parentRunId, (p) =>
				(p.limitUsd ?? 0) >= done.limitUsd ? {} : { patch: { set: { limitUsd: done.limitUsd } } },
			);
	}
	for (const index of done.steps) {
		const claimed = await claimLaunch(deps, msg.runId, index);
		if (claimed) await startTask(deps, claimed, index);
	}
}

/**
 * A `/lisa continue` (a comment, the Linear session) for a run: its pending request, approved if
 * the comment is newer than the request and approved none before (checked again at the write).
 */
export async function approveFrom(
	deps: PipelineDeps,
	run: Run,
	by: string,
	via: ApproveRequested["via"],
	comment: NonNullable<ApproveRequested["comment"]>,
	/** The Linear user's id, for a yes in the agent session (`by` is then their name). */
	byId?: string,
): Promise<void> {
	if (run.status !== "awaiting_approval" || !run.approval) return;
	const requestedAt = run.approval.requestedAt;
	await deps.queue.send(
		"events",
		approveRequested({
			runId: run.runId,
			by,
			...(byId ? { byId } : {}),
			via,
			requestedAt,
			comment,
		}),
	);
}
