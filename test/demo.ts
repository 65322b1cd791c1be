import { createStackWorld } from "./support/stack";

// `npm run demo`: the whole pipeline on this machine against the wire-level doubles — a Linear
// issue is labelled, the signed webhook arrives, a fake `claude` commits, the PR opens on the
// GitHub double, and Linear moves to In Review. Nothing leaves the machine.

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const w = await createStackWorld();
try {
	const issue = w.issue(
		"Add a health check endpoint",
		"GET /health should answer 200 with {ok:true}.",
	);
	console.log(
		`Linear double: ${issue.identifier} "${issue.title}" labelled lisa, in ${w.linear.stateName(issue)}`,
	);
	const res = await w.sendWebhook(w.createdWebhook(issue));
	const { runId } = (await res.json()) as { runId: string };
	console.log(`POST /webhooks/linear → ${res.status}, run ${runId}`);
	const run = await w.waitForRun(runId);
	const pr = w.github.pulls("acme/api")[0];
	console.log(`run ${run.status}: branch ${run.steps[0]?.branch}`);
	console.log(`pull request: ${pr?.html_url} (${pr?.head.ref} → ${pr?.base.ref}) "${pr?.title}"`);
	console.log(
		`Linear issue now in "${w.linear.stateName(issue)}"; comment:\n${w.linear.state.comments.at(-1)?.body}`,
	);
} finally {
	await w.stop();
}
