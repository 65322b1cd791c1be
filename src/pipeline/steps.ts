import { randomBytes } from "node:crypto";
import { pausePatch, withBudget } from "../domain/budget";
import { costingOf } from "../domain/cost";
import { runEnded, type TimelineEventType } from "../domain/events";
import type { Plan } from "../domain/plan";
import {
	cancelPatch,
	decideOnStepFinished,
	effectiveOutcome,
	MAX_RETRY_DELAY_SECONDS,
	type StepOutcome,
} from "../domain/progress";
import { type Run, repoAccess, workSteps } from "../domain/run";
import { canRun, isTerminalRun } from "../domain/states";
import { stepLabel } from "../domain/step-label";
import type { PullRequestFollowUps } from "../integrations/github/pulls/follow-up";
import { isTransientGitHubError } from "../integrations/github/refs";
import { NotConfigured } from "../integrations/tracker";
import { type LaunchRepo, launchRepos } from "../launcher/launcher";
import {
	type CancelRequested,
	epicAdvance,
	type StepLaunch,
	stepFinished,
	stepLaunch,
} from "../queue/messages";
import { askApproval, launchBudget, moneyOf, recordSpend } from "./budget";
import type { PipelineDeps } from "./deps";
import { finalize } from "./finalize";
import { mutate, note } from "./mutate";
import { reportPlan, reportStep } from "./report";

const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * pending → launching. Returns the run when this caller won the claim, so only one launch happens.
 * A retry waiting out its backoff is not launched before its time (nor another attempt's).
 */
export async function claimLaunch(
	deps: PipelineDeps,
	runId: string,
	index: number,
	attempt?: number,
): Promise<Run | undefined> {
	const now = deps.now();
	const before = await deps.store.getRun(runId);
	const money = before && (await moneyOf(deps, before));
	const res = await mutate(deps, runId, (run) => {
		const step = run.steps[index];
		if (step?.status !== "pending" || isTerminalRun(run.status)) return {};
		if (run.status === "awaiting_approval") return {};
		if (attempt !== undefined && step.attempt !== attempt) return {};
		if (step.notBefore && Date.parse(step.notBefore) > now.getTime() + 1000) return {};
		// Between attempts and rounds: a run that spent its limit asks before it spends more.
		const { budget, pause } = launchBudget(run, index, money, now.toISOString());
		if (pause && canRun(run.status, "pause"))
			return { patch: pausePatch(run, pause), paused: true };
		return {
			patch: {
				steps: {
					[index]: {
						status: "launching" as const,
						launchedAt: now.toISOString(),
						notBefore: undefined,
						...(budget ? { budget } : {}),
					},
				},
			},
		};
	});
	if (res?.changed && "paused" in res.decision) {
		await askApproval(deps, res.run);
		return undefined;
	}
	return res?.changed ? res.run : undefined;
}

/**
 * `step.launch` (also the sweeper's, for a launch message that was lost): a retry's backoff is
 * over; launch it unless something else already did.
 */
export async function handleStepLaunch(
	deps: PipelineDeps,
	msg: Pick<StepLaunch, "runId" | "stepIndex" | "attempt">,
): Promise<void> {
	const claimed = await claimLaunch(deps, msg.runId, msg.stepIndex, msg.attempt);
	if (claimed) await startTask(deps, claimed, msg.stepIndex);
}

/** Has the retry's launch message sent (delayed until its time, at most SQS's 15 minutes). */
export async function scheduleLaunch(deps: PipelineDeps, run: Run, index: number): Promise<void> {
	const step = run.steps[index];
	if (step?.status !== "pending" || !step.notBefore) return;
	const wait = Math.ceil((Date.parse(step.notBefore) - deps.now().getTime()) / 1000);
	await deps.queue.send(
		"events",
		stepLaunch({ runId: run.runId, stepIndex: index, attempt: step.attempt }),
		{ delaySeconds: Math.min(MAX_RETRY_DELAY_SECONDS, Math.max(0, wait)) },
	);
}

/** Launches the current attempt of a `launching` step and records its task id. */
export async function startTask(deps: PipelineDeps, run: Run, index: number): Promise<void> {
	const step = run.steps[index];
	if (step?.status !== "launching") return;
	const { attempt } = step;
	const repos = launchRepos(run, index);
	let taskId: string;
	try {
		const stepToken = await handOverToken(deps, run, index, repos);
		({ taskId } = await deps.launcher.launch({
			runId: run.runId,
			stepIndex: index,
			attempt,
			repos,
			...(stepToken ? { stepToken } : {}),
		}));
	} catch (err) {
		await failAttempt(deps, run.runId, index, attempt, {
			event: "step.launch_failed",
			error: `could not launch the agent task: ${(err as Error).message}`,
			transient: !(err instanceof TokenRefused),
			data: { attempt },
		});
		return;
	}
	const res = await mutate(deps, run.runId, (r) => {
		const s = r.steps[index];
		if (!s || s.attempt !== attempt || s.status !== "launching") return {};
		return { patch: { steps: { [index]: { status: "running" as const, taskId } } } };
	});
	const now = res?.run.steps[index];
	if (!res?.changed && now && (now.status === "cancelled" || now.attempt !== attempt)) {
		// Cancelled or superseded while launching: the task must not keep running.
		await deps.launcher.stop(taskId).catch(() => {});
	}
	await note(
		deps,
		run.runId,
		"step.launched",
		`${stepLabel(run.steps, index)} attempt ${attempt} started as ${taskId}`,
		{
			step: index,
			data: { attempt, taskId },
		},
	);
}

/** Each pull request of a multi-repo run lists the others (best effort: a failure is noted). */
async function linkRunPulls(deps: PipelineDeps, run: Run, stepIndex: number): Promise<void> {
	const prs = workSteps(run).flatMap((s) => (s.prUrl ? [{ repo: s.repo, url: s.prUrl }] : []));
	if (prs.length < 2) return;
	let pulls: PullRequestFollowUps;
	try {
		pulls = deps.pulls();
	} catch (err) {
		if (err instanceof NotConfigured) return;
		throw err;
	}
	await pulls.linkRelated(prs, {
		add: (type, message) => note(deps, run.runId, type, message, { step: stepIndex }),
	});
}

/** GitHub refused to mint a step's token for a reason another attempt would meet too. */
class TokenRefused extends Error {}

/** A 403 that is GitHub's rate limit (primary or secondary): worth another attempt. */
const rateLimited = (err: unknown): boolean => {
	const headers = (err as { response?: { headers?: Record<string, string> } }).response?.headers;
	return headers?.["retry-after"] !== undefined || headers?.["x-ratelimit-remaining"] === "0";
};

/**
 * With a GitHub App, mints the attempt's token and keeps it in the store under a nonce the launch
 * hands its task alone (docs/trackers.md › As a GitHub App (a token per step)): the launch's
 * overrides, which describing the task shows, hold the nonce, never the token. The nonce, for the
 * launch.
 */
async function handOverToken(
	deps: PipelineDeps,
	run: Run,
	index: number,
	repos: LaunchRepo[],
): Promise<string | undefined> {
	const step = run.steps[index];
	if (!deps.mintStepToken || !step) return undefined;
	const missing = repos.find((r) => !r.slug);
	if (missing)
		throw new TokenRefused(
			`repo "${missing.name}" has no GitHub repository (slug) for the App's token: set its slug`,
		);
	let minted: { token: string; expiresAt: string };
	try {
		minted = await deps.mintStepToken(
			repos.map((r) => r.slug as string),
			repoAccess(run, step),
		);
	} catch (err) {
		const message = `the GitHub App could not mint the step's token: ${(err as Error).message}`;
		throw isTransientGitHubError(err) || rateLimited(err)
			? new Error(message)
			: new TokenRefused(message);
	}
	const nonce = randomBytes(16).toString("hex");
	await deps.store.putStepToken(
		{ runId: run.runId, stepIndex: index, attempt: step.attempt, nonce },
		minted.token,
		minted.expiresAt,
	);
	return nonce;
}

/**
 * An attempt that ended without its task's report (launch failed, task lost, crashed or timed
 * out): noted on the timeline, then handled as a failure concluded here — a report the task
 * stores meanwhile wins over it.
 */
export async function failAttempt(
	deps: PipelineDeps,
	runId: string,
	stepIndex: number,
	attempt: number,
	failure: {
		event: TimelineEventType;
		error: string;
		transient: boolean;
		data?: Record<string, unknown>;
	},
): Promise<void> {
	await note(deps, runId, failure.event, failure.error, { step: stepIndex, data: failure.data });
	await handleStepFinished(deps, {
		...stepFinished({
			runId,
			stepIndex,
			attempt,
			outcome: "failed",
			transient: failure.transient,
			error: failure.error,
		}),
		synthetic: true,
	});
}

/**
 * Applies a step's report (from the queue, or synthesised by the sweeper or an ECS event for a lost
 * task): retry, turn an accepted plan into steps, launch the next steps, or finish the run
 * (finalize stops running siblings of a failed step) and update the tracker.
 */
export async function handleStepFinished(deps: PipelineDeps, outcome: StepOutcome): Promise<void> {
	const now = deps.now().toISOString();
	const before = await deps.store.getRun(outcome.runId);
	const money = before && (await moneyOf(deps, before));
	const res = await mutate(deps, outcome.runId, (run) => {
		// What the decision rests on, for the timeline: the stored report beats a synthetic failure.
		const msg = effectiveOutcome(run, outcome);
		const limits = {
			maxAttempts: run.config?.limits.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
			parallelSteps: run.config?.limits.parallel_steps ?? 1,
			retryBackoffSeconds: run.config?.limits.retry_backoff_seconds ?? 0,
		};
		const costing = money?.costing ?? costingOf(run.config, deps.taskSize);
		const decided = decideOnStepFinished(run, msg, now, limits, costing);
		if (!money) return { ...decided, msg };
		const stopped = msg.outcome === "failed" && msg.budget ? msg.stepIndex : undefined;
		return { ...withBudget(run, decided, stopped, money, now), msg };
	});
	if (!res) {
		deps.log.warn({ runId: outcome.runId }, "step report for an unknown run ignored");
		return;
	}
	const { run, decision } = res;
	const { msg } = decision;
	await recordSpend(deps, run, msg.stepIndex, msg.attempt);
	if (outcome.synthetic && !msg.synthetic && decision.kind !== "ignore")
		await note(
			deps,
			run.runId,
			"step.reported",
			`${stepLabel(run.steps, msg.stepIndex)} attempt ${msg.attempt}: the task's stored report is used, not the failure concluded meanwhile (${outcome.error ?? "unknown"})`,
			{ step: msg.stepIndex },
		);
	// Checks, reviews and comments on the pull request find the run through it
	// (docs/follow-ups.md › Follow-ups). Also for a redelivery decided "ignore": the first delivery
	// may have died before linking.
	if (msg.prUrl && msg.outcome === "succeeded" && !run.round) {
		await deps.store.linkPullRequest(msg.prUrl, run.runId);
		if (run.steps[msg.stepIndex]?.order) await linkRunPulls(deps, run, msg.stepIndex);
	}
	const step = stepLabel(run.steps, msg.stepIndex);
	switch (decision.kind) {
		case "ignore":
			deps.log.info({ runId: run.runId, reason: decision.reason }, "step report ignored");
			// A redelivery after a crash mid-finalize (or before the plan was posted): resume.
			if (isTerminalRun(run.status)) await finalize(deps, run.runId);
			else if (run.plan) await reportPlan(deps, run);
			return;
		case "pause":
			if (msg.outcome === "succeeded") {
				await noteSucceeded(deps, run, msg);
				if (run.steps[msg.stepIndex]?.kind === "plan") await reportPlan(deps, run);
				else await reportStep(deps, run, msg.stepIndex);
			} else
				await note(
					deps,
					run.runId,
					msg.budget ? "step.failed" : "step.retry",
					`${step} attempt ${msg.attempt} ${msg.budget ? "was stopped at the run's cost limit" : `failed (transient): ${msg.error ?? "unknown"}`}; attempt ${msg.attempt + 1} waits for approval`,
					{ step: msg.stepIndex, data: { budget: msg.budget } },
				);
			await askApproval(deps, run);
			return;
		case "retry":
			await note(
				deps,
				run.runId,
				"step.retry",
				`${step} attempt ${msg.attempt} failed (transient): ${msg.error ?? "unknown"}; starting attempt ${decision.attempt}${decision.delaySeconds ? ` in ${decision.delaySeconds} s` : ""}`,
				{ step: msg.stepIndex, data: { delaySeconds: decision.delaySeconds } },
			);
			if (decision.delaySeconds) await scheduleLaunch(deps, run, decision.stepIndex);
			else await startTask(deps, run, decision.stepIndex);
			return;
		case "advance":
			await noteSucceeded(deps, run, msg);
			for (const index of decision.launch) await startTask(deps, run, index);
			if (decision.plan) await reportPlan(deps, run);
			else if (decision.epicPlanned) await startEpic(deps, run);
			else if (!run.steps[msg.stepIndex]?.kind) await reportStep(deps, run, msg.stepIndex);
			return;
		case "finish":
			if (decision.needsSpec)
				await note(deps, run.runId, "epic.needs_spec", decision.needsSpec.join("\n"), {
					step: msg.stepIndex,
					data: { questions: decision.needsSpec },
				});
			else if (decision.planErrors)
				await note(deps, run.runId, "plan.rejected", decision.planErrors.join("; "), {
					step: msg.stepIndex,
					data: { errors: decision.planErrors },
				});
			else
				await note(
					deps,
					run.runId,
					msg.outcome === "succeeded" ? "step.succeeded" : "step.failed",
					stepSummary(run, msg),
					{
						step: msg.stepIndex,
						data: reportData(msg),
					},
				);
			// The patch moved the run to the decision's outcome.
			await note(
				deps,
				run.runId,
				runEnded(decision.outcome),
				decision.outcome === "succeeded" ? "run succeeded" : `run failed: ${run.error ?? ""}`,
			);
			await finalize(deps, run.runId);
			return;
	}
}

/** An epic's plan was accepted: its tasks go on through `epic.advance` (docs/epics.md › Epics). */
async function startEpic(deps: PipelineDeps, run: Run): Promise<void> {
	const epicTasks = run.epic?.tasks ?? [];
	await note(
		deps,
		run.runId,
		"epic.planned",
		`plan accepted: ${epicTasks.length} task${epicTasks.length === 1 ? "" : "s"}: ${epicTasks.map((t) => `${t.id} (${t.repo}${t.dependsOn.length ? ` after ${t.dependsOn.join(", ")}` : ""})`).join(", ")}`,
		{ data: { tasks: epicTasks.map((t) => ({ id: t.id, repo: t.repo, dependsOn: t.dependsOn })) } },
	);
	await deps.queue.send("events", epicAdvance({ runId: run.runId, why: "its plan was accepted" }));
}

/** A step's success on the timeline: the accepted plan of a planning step, else its PR. */
async function noteSucceeded(deps: PipelineDeps, run: Run, msg: StepOutcome): Promise<void> {
	const plan = run.steps[msg.stepIndex]?.kind === "plan" ? run.plan : undefined;
	if (plan)
		await note(deps, run.runId, "plan.accepted", planSummary(plan), {
			step: msg.stepIndex,
			data: { plan, provider: msg.provider },
		});
	else
		await note(deps, run.runId, "step.succeeded", stepSummary(run, msg), {
			step: msg.stepIndex,
			data: reportData(msg),
		});
}

function planSummary(plan: Plan): string {
	return `plan accepted: ${plan.steps.map((s) => `${s.repo} (order ${s.order})`).join(", ")}`;
}

function stepSummary(run: Run, msg: StepOutcome): string {
	const step = stepLabel(run.steps, msg.stepIndex);
	return msg.outcome === "succeeded"
		? `${step} succeeded${msg.prUrl ? `: ${msg.prUrl}` : ""}`
		: `${step} failed: ${msg.error ?? "unknown error"}`;
}

function reportData(msg: StepOutcome): Record<string, unknown> {
	return { attempt: msg.attempt, branch: msg.branch, prUrl: msg.prUrl, provider: msg.provider };
}

/** `run.cancel`: mark the run and its unfinished steps cancelled; finalize stops their tasks. */
export async function handleCancel(deps: PipelineDeps, msg: CancelRequested): Promise<void> {
	const now = deps.now().toISOString();
	const res = await mutate(deps, msg.runId, (run) =>
		isTerminalRun(run.status) ? {} : { patch: cancelPatch(run, now, msg.reason) },
	);
	if (!res) return;
	if (res.changed) await note(deps, msg.runId, "run.cancelled", msg.reason);
	await finalize(deps, msg.runId);
}
