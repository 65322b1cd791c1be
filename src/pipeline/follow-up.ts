import type { FollowUpDue, FollowUpRequested } from "../queue/messages";
import type { PipelineDeps } from "./deps";

// PLACEHOLDER: being written on this branch.
export async function handleFollowUpRequested(
	_d: PipelineDeps,
	_m: FollowUpRequested,
): Promise<void> {}
export async function handleFollowUpDue(_d: PipelineDeps, _m: FollowUpDue): Promise<void> {}
