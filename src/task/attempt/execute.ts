import { Workspace } from "../sandbox/workspace";
import { publish } from "../steps/publish";
import { implementAndCheck } from "../steps/rounds";
import { type Attempt, checkoutFailure, gitFor, implementInputs } from "./context";

/** Prepare → implement and check (with retries) → publish. Throws StepFailure. */
export async function execute(
	a: Attempt,
): Promise<{ branch: string; prUrl: string; provider: string }> {
	const s = implementInputs(a);
	const git = gitFor(a, s.repo.url);
	const ws = new Workspace(git, a.req.workspace, s.repo.url, s.repo.base_branch, s.branch);
	await ws.prepare().catch((err) => {
		throw checkoutFailure(s.repo.name, err);
	});
	a.heartbeat.check();
	const { sha, work, provider } = await implementAndCheck(a, s, ws);
	const prUrl = await publish(a, s, ws, work, sha);
	return { branch: s.branch, prUrl, provider };
}
