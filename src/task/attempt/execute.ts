import { type Attempt, checkoutFailure, gitFor, implementInputs } from "../context/attempt";
import { Workspace } from "../sandbox/workspace";
import { implementAndCheck } from "../steps/implement-and-check";
import { type Published, publish } from "../steps/publish";

/** Prepare → implement and check (with retries) → publish. Throws StepFailure. */
export async function execute(
	a: Attempt,
): Promise<Published & { branch: string; provider: string }> {
	const s = implementInputs(a);
	const git = gitFor(a, s.repo.url);
	const ws = new Workspace(git, a.req.workspace, s.repo.url, s.base, s.branch);
	await ws.prepare().catch((err) => {
		throw checkoutFailure(s.repo.name, err);
	});
	a.heartbeat.check();
	const done = await implementAndCheck(a, s, ws);
	const published = await publish(a, s, ws, done);
	return { branch: s.branch, provider: done.provider, ...published };
}
