import { cleanPath, cleanTitle, type StepChanges } from "../../domain/changes";
import type { RoundInput, RoundReport } from "../../domain/follow-up";
import { oneLine, redact } from "../../domain/redact";
import { isTransientFailure } from "../../domain/transient";
import { githubClient } from "../../integrations/github/app";
import { conventionalTitle, prBody } from "../../integrations/github/pulls/body";
import { openPullRequest } from "../../integrations/github/pulls/open";
import { siblingPrs } from "../../integrations/github/pulls/related";
import { isTransientGitHubError } from "../../integrations/github/refs";
import type { Attempt, ImplementInputs } from "../context/attempt";
import { StepFailure } from "../report/failure";
import { BranchMoved } from "../sandbox/publication";
import type { Work, Workspace } from "../sandbox/workspace";
import type { Checked } from "./implement-and-check";
import { readManifest, readRoundManifest, roundReport } from "./manifest";

export interface Published {
	prUrl: string;
	/** The title the pull request was opened with (a follow-up round keeps the PR's own). */
	prTitle?: string;
	/** What the published commit changed since the base (a round: since the head it started from). */
	changes?: StepChanges;
	/** A follow-up round's summary and replies. */
	round?: RoundReport;
}

/**
 * Pushes the pinned commit to the step's branch and opens (or updates) its pull request, once a
 * heartbeat written now confirms the step is still this attempt's; a follow-up round only adds its
 * commits to its pull request's branch. The manifest is the agent's words: redacted like
 * everything else that leaves the task.
 */
export async function publish(
	a: Attempt,
	s: ImplementInputs,
	ws: Workspace,
	checked: Checked,
): Promise<Published> {
	if (s.round) return publishRound(a, s.round, ws, checked);
	const { work, sha } = checked;
	const manifest = await readManifest(work.manifestDir);
	const secrets = a.deps.secrets;
	await a.heartbeat.confirm();
	await ws.publish.push(sha, s.branch).catch((err) => {
		throw pushFailure(err);
	});
	await a.timeline.add("publish.pushed", `pushed ${sha.slice(0, 12)} to ${s.branch}`, { sha });
	const { runId, stepIndex } = a.req;
	const octokit = githubClient(a.deps.githubToken, a.deps.env.GITHUB_API_URL);
	const related = s.step.order ? await siblingPrs(a.deps.store, runId, stepIndex) : [];
	const title = conventionalTitle(redact(manifest.prTitle, secrets));
	const changes = await changesOf(a, ws, work, sha);
	let pr: { url: string; created: boolean };
	try {
		pr = await openPullRequest(octokit, {
			slug: s.repo.slug,
			head: s.branch,
			base: s.repo.base_branch,
			title,
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
	// Recorded at once so a sibling publishing in parallel lists this PR too; the pipeline links
	// the others to it once the report is in.
	if (s.step.order) await a.heartbeat.write({ prUrl: pr.url });
	return { prUrl: pr.url, prTitle: cleanTitle(title), ...(changes ? { changes } : {}) };
}

/**
 * What the commit changed, its paths redacted like all the agent's text; a count that cannot be
 * made is only missing from the report, it fails nothing.
 */
async function changesOf(
	a: Attempt,
	ws: Workspace,
	work: Work,
	sha: string,
): Promise<StepChanges | undefined> {
	try {
		const changes = await ws.changes(work, sha);
		const list = changes.list.map((f) => ({
			...f,
			path: cleanPath(redact(f.path, a.deps.secrets)),
		}));
		return { ...changes, list };
	} catch (err) {
		a.deps.log.warn({ err }, "could not count the step's changes");
		return undefined;
	}
}

const pushFailure = (err: unknown) =>
	new StepFailure(
		`push failed: ${(err as Error).message}`,
		isTransientFailure(String(err)),
		"publish",
	);

/**
 * A follow-up round (docs/follow-ups.md › Follow-ups): its commits go on top of the pull request's
 * branch — a fast-forward from the head it started from, never a force push — and the pull
 * request's title and body stay as they are. A round that changed nothing pushes nothing.
 */
async function publishRound(
	a: Attempt,
	round: RoundInput,
	ws: Workspace,
	{ work, sha, noChange }: Checked,
): Promise<Published> {
	const report = roundReport(
		await readRoundManifest(work.manifestDir),
		round,
		a.deps.secrets,
		noChange === true,
	);
	if (noChange) {
		await a.timeline.add(
			"round.unchanged",
			`the agent changed nothing: ${oneLine(report.summary ?? "", 300)}`,
		);
		return { prUrl: round.prUrl, round: report };
	}
	await a.heartbeat.confirm();
	await ws.publish.advance(sha, round.branch).catch((err) => {
		if (err instanceof BranchMoved) throw new StepFailure(err.message, false, "publish");
		throw pushFailure(err);
	});
	await a.timeline.add(
		"publish.pushed",
		`pushed ${sha.slice(0, 12)} onto ${round.branch} (${round.prUrl})`,
		{ sha, prUrl: round.prUrl },
	);
	const changes = await changesOf(a, ws, work, sha);
	return { prUrl: round.prUrl, round: report, ...(changes ? { changes } : {}) };
}
