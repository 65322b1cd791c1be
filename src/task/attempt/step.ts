import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { guardrailSummary } from "../../domain/guardrails";
import { redact } from "../../domain/redact";
import { type Run, readsAllRepos, type Step, type StepReport } from "../../domain/run";
import { isTransientFailure } from "../../domain/transient";
import { attemptUsage } from "../../domain/usage";
import { stepFinished } from "../../queue/messages";
import { Broker } from "../broker/broker";
import type { Attempt, Lesson, StepRequest, TaskDeps } from "../context/attempt";
import { launchedRepos } from "../context/repos";
import { attemptToken } from "../context/token";
import { confineAgent, confinesNetwork } from "../egress/confine";
import { BudgetStop, type FailureKind, StepFailure } from "../report/failure";
import { Heartbeat } from "../report/heartbeat";
import { Timeline } from "../report/timeline";
import { AGENT_MARK, agentUser, prepareHome, stopAgentProcesses } from "../sandbox/identity";
import { clearWorkspace } from "../sandbox/workspace";
import { executeEpicPlan, executeResearch, researchOf } from "../steps/epic-phases";
import { executePlan } from "../steps/plan";
import { execute } from "./execute";

export type { StepRequest, TaskDeps } from "../context/attempt";

type Outcome = Omit<StepReport, "attempt" | "at">;

/**
 * One step attempt: prepare → implement (fallback chain, supervised) → check (gates, validate,
 * retries) → publish → report; or, for a multi-repo run's planning step or an epic's phase, the
 * phase's files → report. A handled failure is reported like a success (the message carries it),
 * so the process exits 0 either way.
 * The task writes only its step's own fields and events. Once a write of the step is refused (the
 * step was retried or stopped) the attempt stops where it is: no push, no report.
 */
export async function runStep(deps: TaskDeps, req: StepRequest): Promise<StepReport | undefined> {
	const run = await deps.store.getRun(req.runId);
	const step = run?.steps[req.stepIndex];
	if (!run || !step) throw new Error(`run ${req.runId} step ${req.stepIndex} does not exist`);
	if (step.attempt !== req.attempt) {
		deps.log.warn({ ...req, current: step.attempt }, "attempt superseded; exiting without work");
		return undefined;
	}
	// The task's one list (its log reads it too): what the attempt learns is added to it.
	const { secrets } = deps;
	if (deps.githubToken && !secrets.includes(deps.githubToken)) secrets.push(deps.githubToken);
	const heartbeat = new Heartbeat(deps.store, req.runId, req.stepIndex, req.attempt, (err) =>
		deps.log.warn({ err }, "heartbeat write failed"),
	);
	const timeline = new Timeline(deps.store, req.runId, req.stepIndex, secrets, deps.log);
	// What an earlier attempt found does not describe this one.
	if (!(await heartbeat.write({ validation: undefined }))) {
		deps.log.warn(req, "attempt superseded; exiting without work");
		return undefined;
	}
	heartbeat.start();
	// Every process started for the agent carries the mark: without an agent user, the mark is
	// how the attempt finds what its agent left running.
	const mark = randomUUID();
	const home = path.join(req.workspace, "home");
	const attempt: Attempt = {
		deps: { ...deps, secrets, env: { ...deps.env, [AGENT_MARK]: mark } },
		run,
		req,
		heartbeat,
		timeline,
		scope: { mark },
		repos: [],
		agentRuns: [],
	};
	let outcome: Outcome;
	try {
		attempt.broker = await Broker.start();
		const user = agentUser(deps.env, home);
		attempt.scope = { user, mark };
		// In a container nothing made it (LISA_WORKSPACE unset), as the clone's own folders would.
		await mkdir(req.workspace, { recursive: true });
		if (user) await prepareHome(user, home);
		attempt.repos = launchedRepos(deps.env);
		if (user && confinesNetwork(deps.env))
			attempt.egress = await confineAgent(user, attempt.broker, attempt.repos, timeline);
		attempt.deps.githubToken = await attemptToken(attempt);
		const done = await executeKind(attempt, step);
		outcome = { outcome: "succeeded", ...done };
		heartbeat.state = "completed";
	} catch (err) {
		heartbeat.state = "crashed";
		const failure =
			err instanceof StepFailure
				? err
				: new StepFailure((err as Error).message, isTransientFailure(String(err)), "agent");
		if (learnsFrom(failure.kind) && !failure.transient && failure.lesson)
			attempt.lesson ??= { failure: failure.kind, summary: failure.lesson };
		outcome = {
			outcome: "failed",
			error: redact(failure.message, secrets),
			transient: failure.transient,
			...(failure instanceof BudgetStop ? { budget: failure.budget } : {}),
		};
	} finally {
		heartbeat.stop();
		await attempt.broker?.close();
		// Nothing the agent started outlives the attempt, nor does its workspace.
		await stopAgentProcesses(attempt.scope).catch((err: unknown) =>
			deps.log.warn({ err }, "could not stop the agent's processes"),
		);
		await attempt.egress?.close();
		await clearWorkspace(req.workspace).catch((err: unknown) =>
			deps.log.warn({ err }, "could not remove the attempt's workspace"),
		);
	}
	if (heartbeat.signal.aborted) {
		await timeline.add(
			"attempt.superseded",
			`attempt ${req.attempt} stopped: the step is no longer this attempt's (retried or stopped), so it reports nothing`,
		);
		return undefined;
	}
	// A repo's guardrails come from its own steps; a plan is about no single repo.
	if (!readsAllRepos(step)) await learn(deps, run, step.repo, attempt.lesson, secrets);
	outcome.usage = attemptUsage(attempt.agentRuns);
	const report: StepReport = { ...outcome, attempt: req.attempt, at: new Date().toISOString() };
	// Stored first, so the sweeper can re-send it if the message is lost.
	await deps.store.updateStepFields(req.runId, req.stepIndex, req.attempt, {
		report,
		agentState: heartbeat.state,
		heartbeatAt: report.at,
	});
	await deps.queue.send(
		"events",
		stepFinished({
			runId: req.runId,
			stepIndex: req.stepIndex,
			...outcome,
			attempt: req.attempt,
		}),
	);
	return report;
}

/** What the step's kind does: implement, plan, or an epic's phase (docs/epics.md › Epics). */
function executeKind(a: Attempt, step: Step): Promise<Omit<Outcome, "outcome">> {
	if (step.kind === "plan") return executePlan(a);
	if (step.kind === "research") return executeResearch(a);
	if (step.kind !== "epic_plan") return execute(a);
	const research = researchOf(a.run);
	if (research === undefined)
		throw new StepFailure(
			"the epic has no research to plan from: its research step has not succeeded",
			false,
			"plan",
		);
	return executeEpicPlan(a, research);
}

const LEARN_FROM: readonly Lesson["failure"][] = ["agent", "validation", "gate"];
const learnsFrom = (k: FailureKind): k is Lesson["failure"] =>
	(LEARN_FROM as readonly FailureKind[]).includes(k);

/** Stores the attempt's first lesson (Lisa's words only) as a guardrail of the repo (bounded, redacted). */
async function learn(
	deps: TaskDeps,
	run: Run,
	repo: string,
	lesson: Lesson | undefined,
	secrets: string[],
): Promise<void> {
	if (!lesson) return;
	try {
		await deps.store.addGuardrail(repo, {
			at: new Date().toISOString(),
			runId: run.runId,
			issueKey: run.issue?.key ?? run.issueKey,
			provider: lesson.provider,
			failure: lesson.failure,
			summary: guardrailSummary(redact(lesson.summary, secrets)),
		});
	} catch (err) {
		deps.log.warn({ err }, "could not store the guardrail");
	}
}
