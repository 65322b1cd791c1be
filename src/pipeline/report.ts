import { planComment, startComment, stepComment } from "../domain/comments";
import type { Run, TrackerProgress } from "../domain/run";
import {
	acknowledgement,
	planAction,
	type SessionActivity,
	startedAction,
	stepAction,
} from "../domain/session-activity";
import { NotConfigured, type Tracker, TrackerError } from "../integrations/tracker";
import type { PipelineDeps } from "./deps";
import { mutate, note } from "./mutate";

// Progress in the tracker while a run works: one comment per stage (start, plan, each step's PR)
// or, for a run started from a Linear agent session, activities in the session. The outcome is
// finalize's.

/** Marks tracker effects done on the run, so a redelivered message does not repeat them. */
export async function recordProgress(
	deps: PipelineDeps,
	runId: string,
	progress: TrackerProgress,
): Promise<Run | undefined> {
	const res = await mutate(deps, runId, (r) => ({
		patch: { set: { tracker: { ...r.tracker, ...progress } } },
	}));
	return res?.run;
}

/**
 * Records a progress post as done before it is made; returns the run when this caller recorded it.
 * Two handlers of one run may get to the same post together (redeliveries, the sweeper's
 * re-drives): only one posts. At most once, like every progress post: a crash right after the
 * claim loses the post.
 */
async function claimPost(
	deps: PipelineDeps,
	runId: string,
	post: "startComment" | "planComment",
): Promise<Run | undefined> {
	const res = await mutate(deps, runId, (r) =>
		r.tracker[post] ? {} : { patch: { set: { tracker: { ...r.tracker, [post]: true } } } },
	);
	return res?.changed ? res.run : undefined;
}

function trackerOf(deps: PipelineDeps, run: Run): Tracker | undefined {
	try {
		return deps.tracker(run.source);
	} catch (err) {
		if (err instanceof NotConfigured) return undefined;
		throw err;
	}
}

/** Posts to the tracker without failing the run: a failure is noted on the run's timeline. */
async function bestEffort(
	deps: PipelineDeps,
	run: Run,
	what: string,
	post: (tracker: Tracker) => Promise<unknown>,
): Promise<boolean> {
	const tracker = trackerOf(deps, run);
	if (!tracker) {
		await note(
			deps,
			run.runId,
			"tracker.error",
			`${what}: the ${run.source} tracker is not configured`,
		);
		return false;
	}
	try {
		await post(tracker);
		return true;
	} catch (err) {
		const reason = err instanceof TrackerError ? err.message : String(err);
		deps.log.warn({ err, runId: run.runId }, `${what} failed`);
		await note(deps, run.runId, "tracker.error", `${what} failed: ${reason}`);
		return false;
	}
}

const postActivity = (run: Run, content: SessionActivity) => async (tracker: Tracker) => {
	if (!tracker.sessions || !run.agentSessionId) return;
	await tracker.sessions.activity(run.agentSessionId, content);
};

/**
 * The first thing a session run does: a `thought` within Linear's 10 s, plus the run's link on the
 * session. It runs before anything that can fail, so a run that fails later has still answered.
 */
export async function acknowledgeSession(deps: PipelineDeps, run: Run): Promise<Run> {
	const sessionId = run.agentSessionId;
	if (!sessionId || run.tracker.acknowledged) return run;
	const url = deps.runUrl(run.runId);
	const posted = await bestEffort(
		deps,
		run,
		"acknowledging the agent session",
		postActivity(run, acknowledgement(run, url)),
	);
	if (!posted) return run;
	await note(
		deps,
		run.runId,
		"session.acknowledged",
		"posted the first thought to the agent session",
	);
	await bestEffort(deps, run, "linking the run to the agent session", (s) =>
		s.sessions ? s.sessions.link(sessionId, url, "Lisa run") : Promise.resolve(),
	);
	return (await recordProgress(deps, run.runId, { acknowledged: true })) ?? run;
}

/** "Lisa is working on it": a comment with the run link, or an action in the agent session. */
export async function reportStart(deps: PipelineDeps, run: Run): Promise<Run> {
	if (run.tracker.startComment || !run.issue) return run;
	const claimed = await claimPost(deps, run.runId, "startComment");
	if (!claimed) return run;
	await postProgress(
		deps,
		claimed,
		"the start",
		() => startedAction(claimed),
		() => startComment(claimed, deps.runUrl(claimed.runId)),
	);
	return claimed;
}

/** The accepted plan of a multi-repository run, once (a redelivered report does not repeat it). */
export async function reportPlan(deps: PipelineDeps, run: Run): Promise<void> {
	const plan = run.plan;
	if (!plan || !run.issue || run.tracker.skip || run.tracker.planComment) return;
	if (!(await claimPost(deps, run.runId, "planComment"))) return;
	await postProgress(
		deps,
		run,
		"the plan",
		() => planAction(plan),
		() => planComment(run, plan, deps.runUrl(run.runId)),
	);
}

/** A step opened its PR and the run goes on (multi-repository runs). */
export async function reportStep(deps: PipelineDeps, run: Run, stepIndex: number): Promise<void> {
	if (!run.issue || run.tracker.skip || !run.steps[stepIndex]?.prUrl) return;
	await postProgress(
		deps,
		run,
		"the step",
		() => stepAction(run, stepIndex),
		() => stepComment(run, stepIndex, deps.runUrl(run.runId)),
	);
}

/** One stage's post: an activity in the run's agent session, else a comment unless they are off. */
async function postProgress(
	deps: PipelineDeps,
	run: Run,
	stage: string,
	activity: () => SessionActivity,
	comment: () => string,
): Promise<void> {
	if (run.agentSessionId)
		await bestEffort(
			deps,
			run,
			`posting ${stage} to the agent session`,
			postActivity(run, activity()),
		);
	else if (run.config?.comments.enabled ?? true)
		await bestEffort(deps, run, `commenting ${stage}`, (s) =>
			s.comment(run.issue?.id ?? run.issueId, comment()),
		);
}

/** Answers a follow-up in the agent session (best effort). */
export async function replyInSession(
	deps: PipelineDeps,
	run: Run,
	content: SessionActivity,
): Promise<void> {
	await bestEffort(deps, run, "answering in the agent session", postActivity(run, content));
}

/**
 * Said on the pull requests and the issue (or its Linear session): the follow-ups' limit and guard,
 * a budget's pause. A failure is noted, never thrown.
 */
export async function sayOnIssueAndPullRequests(
	deps: PipelineDeps,
	run: Run,
	prs: readonly string[],
	text: string,
	/** In a Linear session: `elicitation` when the words ask for an answer, `thought` for news. */
	session: "thought" | "response" | "elicitation" = "response",
): Promise<void> {
	for (const prUrl of prs)
		try {
			await deps.pulls().comment(prUrl, text);
			await note(deps, run.runId, "pr.commented", `commented on ${prUrl}`);
		} catch (err) {
			await note(
				deps,
				run.runId,
				"tracker.error",
				`commenting on ${prUrl} failed: ${(err as Error).message}`,
			);
		}
	await bestEffort(deps, run, "telling the issue", (t) =>
		run.agentSessionId && t.sessions
			? t.sessions.activity(run.agentSessionId, { type: session, body: text })
			: t.comment(run.issue?.id ?? run.issueId, text),
	);
}
