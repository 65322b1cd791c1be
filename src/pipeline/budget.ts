import type { ApproveRequested } from "../queue/messages";
import type { PipelineDeps } from "./deps";

// Budgets that pause and ask (README › Cost and budgets). Being written: see issue 15.

export async function handleApprove(_deps: PipelineDeps, _msg: ApproveRequested): Promise<void> {
	throw new Error("approvals are not handled yet");
}
