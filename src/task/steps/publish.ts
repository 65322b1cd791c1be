import { redact } from "../../domain/redact";
import { isTransientFailure } from "../../domain/transient";
import { githubClient, isTransientGitHubError } from "../../integrations/github/issues";
import { conventionalTitle, prBody } from "../../integrations/github/pulls/body";
import { openPullRequest } from "../../integrations/github/pulls/open";
import { linkRelated, siblingPrs } from "../../integrations/github/pulls/related";
import type { Attempt, ImplementInputs } from "../attempt/context";
import { StepFailure } from "../attempt/failure";
import type { Work, Workspace } from "../sandbox/workspace";
import { readManifest } from "./manifest";

/**
 * Pushes the pinned commit to the step's branch and opens (or updates) its pull request, once a
 * heartbeat written now confirms the step is still this attempt's. The manifest's title and body
 * are the agent's words: redacted like everything else that leaves the task.
 */
export async function publish(
	a: Attempt,
	s: ImplementInputs,
	ws: Workspace,
	work: Work,
	sha: string,
): Promise<string> {
	const manifest = await readManifest(work.manifestDir);
	const secrets = a.deps.secrets;
	await a.heartbeat.confirm();
	await ws.publish.push(sha, s.branch).catch((err) => {
		throw new StepFailure(
			`push failed: ${(err as Error).message}`,
			isTransientFailure(String(err)),
			"publish",
		);
	});
	await a.timeline.add("publish.pushed", `pushed ${sha.slice(0, 12)} to ${s.branch}`, { sha });
	const { runId, stepIndex } = a.req;
	const octokit = githubClient(a.deps.githubToken, a.deps.env.GITHUB_API_URL);
	const related = s.step.order ? await siblingPrs(a.deps.store, runId, stepIndex) : [];
	let pr: { url: string; created: boolean };
	try {
		pr = await openPullRequest(octokit, {
			slug: s.repo.slug,
			head: s.branch,
			base: s.repo.base_branch,
			title: conventionalTitle(redact(manifest.prTitle, secrets)),
			body: prBody({
				body: redact(manifest.prBody, secrets),
				issueUrl: s.issue.url,
				issueKey: s.issue.key,
				runId: a.run.runId,
				related,
			}),
		});
	} catch (err) {
		throw new StepFailure(
			`opening the pull request failed: ${(err as Error).message}`,
			isTransientGitHubError(err),
			"publish",
		);
	}
	await a.timeline.add("publish.pr", `${pr.created ? "opened" : "updated"} ${pr.url}`, {
		prUrl: pr.url,
	});
	if (s.step.order) {
		// Recorded at once so a sibling publishing in parallel links this PR too.
		await a.heartbeat.write({ prUrl: pr.url });
		const others = await siblingPrs(a.deps.store, runId, stepIndex);
		await linkRelated(octokit, [...others, { repo: s.repo.name, url: pr.url }], a.timeline);
	}
	return pr.url;
}
