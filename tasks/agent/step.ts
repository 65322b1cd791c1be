import type { RepoConfig } from "../../shared/config/schema";
import { parseModelSpec } from "../../shared/domain/fallback";
import { gateProblems } from "../../shared/domain/gates";
import { type Guardrail, guardrailSummary } from "../../shared/domain/guardrails";
import { conventionalTitle, prBody } from "../../shared/domain/pr-body";
import { buildImplementPrompt, type Problem, type RetryContext } from "../../shared/domain/prompt";
import { headTail, redact } from "../../shared/domain/redact";
import { branchName, type Run, type StepReport } from "../../shared/domain/run";
import { isTransientFailure } from "../../shared/domain/transient";
import type { Logger } from "../../shared/log";
import type { Queue } from "../../shared/queue/sqs";
import type { DynamoStore } from "../../shared/store/dynamo";
import { describeFailure, runCommands } from "./commands";
import { type FailureKind, StepFailure } from "./failure";
import { Git, gitEnv } from "./git";
import { Heartbeat } from "./heartbeat";
import { implement } from "./implement";
import { readManifest } from "./manifest";
import { commandEnv } from "./providers/provider";
import { codeHost, openPullRequest } from "./publish";
import { Timeline } from "./timeline";
import { type Work, Workspace } from "./workspace";

export { StepFailure } from "./failure";

export interface TaskDeps {
	store: DynamoStore;
	queue: Queue;
	log: Logger;
	env: NodeJS.ProcessEnv;
	/** The code host token, kept out of every environment but the push's git process. */
	githubToken?: string;
	/** Secret values redacted from everything the task reports. */
	secrets: string[];
}

export interface StepRequest {
	runId: string;
	stepIndex: number;
	attempt: number;
	workspace: string;
}

type Outcome = Omit<StepReport, "attempt" | "at">;

/** What later runs of the repository should learn from this attempt (its guardrail). */
interface Lesson {
	failure: Guardrail["failure"];
	summary: string;
	provider?: string;
}

/**
 * One step attempt: prepare → implement (fallback chain, supervised) → check (gates, validate,
 * retries) → publish → report. A handled failure is reported like a success (the message carries
 * it), so the process exits 0 either way.
 */
export async function runStep(deps: TaskDeps, req: StepRequest): Promise<StepReport | undefined> {
	const run = await deps.store.getRun(req.runId);
	const step = run?.steps[req.stepIndex];
	if (!run || !step) throw new Error(`run ${req.runId} step ${req.stepIndex} does not exist`);
	if (step.attempt !== req.attempt) {
		deps.log.warn({ ...req, current: step.attempt }, "attempt superseded; exiting without work");
		return undefined;
	}
	const secrets = [...deps.secrets, ...(deps.githubToken ? [deps.githubToken] : [])];
	const heartbeat = new Heartbeat(deps.store, req.runId, req.stepIndex, req.attempt, (err) =>
		deps.log.warn({ err }, "heartbeat write failed"),
	);
	const timeline = new Timeline(deps.store, req.runId, req.stepIndex, secrets, deps.log);
	heartbeat.start();
	const lessons: Lesson[] = [];
	let outcome: Outcome;
	try {
		outcome = await execute({ ...deps, secrets }, run, req, heartbeat, timeline, lessons);
		heartbeat.state = "completed";
	} catch (err) {
		heartbeat.state = "crashed";
		const failure =
			err instanceof StepFailure
				? err
				: new StepFailure((err as Error).message, isTransientFailure(String(err)), "agent");
		if (LEARN_FROM.includes(failure.kind) && !failure.transient)
			lessons.push({ failure: lessonKind(failure.kind), summary: failure.message });
		outcome = {
			outcome: "failed",
			error: redact(failure.message, secrets),
			transient: failure.transient,
		};
	} finally {
		heartbeat.stop();
	}
	await learn(deps, run, step.repo, lessons[0], secrets);
	const report: StepReport = { ...outcome, attempt: req.attempt, at: new Date().toISOString() };
	// Stored first, so the sweeper can re-send it if the message is lost.
	await deps.store.updateStepFields(req.runId, req.stepIndex, req.attempt, {
		report,
		agentState: heartbeat.state,
		heartbeatAt: report.at,
	});
	await deps.queue.send("events", {
		type: "step.finished",
		runId: req.runId,
		stepIndex: req.stepIndex,
		...outcome,
		attempt: req.attempt,
	});
	return report;
}

const LEARN_FROM: FailureKind[] = ["agent", "validation", "gate"];
const lessonKind = (k: FailureKind): Guardrail["failure"] =>
	k === "validation" ? "validation" : k === "gate" ? "gate" : "agent";

/** Stores the attempt's lesson as a guardrail of the repo (bounded, redacted). */
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

/** The task reports before the sweeper's own step timeout (from the launch) would fire. */
export function stepDeadline(launchedAt: string | undefined, minutes: number, now: number): number {
	const budget = minutes * 60_000;
	const launched = launchedAt ? Date.parse(launchedAt) : Number.NaN;
	const start = Number.isFinite(launched) ? Math.min(launched, now) : now;
	return start + budget - Math.min(30_000, budget / 10);
}

async function execute(
	deps: TaskDeps,
	run: Run,
	req: StepRequest,
	heartbeat: Heartbeat,
	timeline: Timeline,
	lessons: Lesson[],
): Promise<Outcome> {
	const config = run.config;
	const step = run.steps[req.stepIndex];
	if (!config || !run.issue || !step)
		throw new StepFailure("the run has no config snapshot or issue", false, "config");
	const issue = run.issue;
	const repo = config.repos.find((r) => r.name === step.repo);
	if (!repo)
		throw new StepFailure(`repo "${step.repo}" is not in the run's config`, false, "config");
	if (!repo.slug)
		throw new StepFailure(
			`repo "${repo.name}" has no slug: set slug: owner/name in the config`,
			false,
			"config",
		);
	const limits = config.limits;
	const deadlineAt = stepDeadline(step.launchedAt, limits.step_timeout_minutes, Date.now());
	const branch = branchName(
		config.branch_prefix,
		issue.key ?? run.issueKey ?? run.issueId,
		issue.title,
	);
	const git = new Git(
		gitEnv(deps.env),
		deps.githubToken ? { token: deps.githubToken, url: repo.url } : undefined,
	);
	const ws = new Workspace(git, req.workspace, repo.url, repo.base_branch, branch);
	await ws.prepare().catch((err) => {
		throw new StepFailure(
			`could not check out ${repo.name}: ${(err as Error).message}`,
			isTransientFailure(String(err)),
			"checkout",
		);
	});

	const models = config.models.map(parseModelSpec);
	const guardrails = await deps.store.guardrails(repo.name).catch(() => []);
	const env = commandEnv(deps.env);
	const setUp = new Set<string>();
	const setup = async (dir: string) => {
		if (setUp.has(dir) || !repo.setup.length) return;
		setUp.add(dir);
		const failure = await runCommands(repo.setup, { cwd: dir, env, deadlineAt });
		if (failure) {
			const message = `${describeFailure("setup", failure)}: ${lastLines(failure.output)}`;
			throw new StepFailure(message, isTransientFailure(failure.output), "setup");
		}
		await timeline.add("setup.finished", `setup ran: ${repo.setup.join(" && ")}`);
	};

	let retry: RetryContext | undefined;
	const ctx = {
		ws,
		models,
		env: deps.env,
		secrets: deps.secrets,
		staleSeconds: limits.stale_output_seconds,
		timeoutMinutes: limits.step_timeout_minutes,
		deadlineAt,
		nativeWorktree: repo.native_worktree === true,
		heartbeat,
		timeline,
		setup,
		prompt: (native?: { manifestPath: string }) =>
			buildImplementPrompt({
				issue,
				repo: repo.name,
				branch,
				baseBranch: repo.base_branch,
				scope: step.scope,
				allowWorkflowChanges: repo.allow_workflow_changes,
				nativeWorktree: native,
				guardrails,
				retry,
			}),
	};

	const maxRuns = 1 + limits.max_validation_retries;
	let work: Work | undefined;
	let from = 0;
	let provider = "";
	for (let n = 1; ; n++) {
		const done = await implement(ctx, from, work);
		({ index: from, work, spec: provider } = done);
		await deps.store.updateStepFields(req.runId, req.stepIndex, req.attempt, {
			provider,
			validation: { agentRuns: n, status: "checking" },
		});
		await setup(done.work.dir);
		const problems = await check(ws, done.work, repo, env, deadlineAt, timeline);
		if (!problems.length) {
			await deps.store.updateStepFields(req.runId, req.stepIndex, req.attempt, {
				validation: { agentRuns: n, status: "passed" },
			});
			break;
		}
		const summary = problems.map((p) => p.summary).join("; ");
		const failedCheck = problems.some((p) => p.kind === "validation") ? "validation" : "gate";
		lessons.push({
			failure: failedCheck,
			summary: problems
				.map((p) => (p.output ? `${p.summary}: ${lastLines(p.output)}` : p.summary))
				.join("; "),
			provider,
		});
		const final = n >= maxRuns;
		await deps.store.updateStepFields(req.runId, req.stepIndex, req.attempt, {
			validation: {
				agentRuns: n,
				status: final ? "failed" : "checking",
				lastFailure: headTail(redact(summary, deps.secrets), 1000),
			},
		});
		await timeline.add(
			failedCheck === "validation" ? "validation.failed" : "gate.refused",
			`${summary}${final ? "" : `; running the agent again (${n + 1} of ${maxRuns})`}`,
			{
				output:
					problems
						.map((p) => p.output ?? "")
						.join("\n")
						.trim() || undefined,
			},
		);
		if (final)
			throw new StepFailure(
				problems
					.map((p) => (p.output ? `${p.summary}: ${lastLines(p.output)}` : p.summary))
					.join("; "),
				false,
				failedCheck,
			);
		retry = { run: n + 1, final: n + 1 >= maxRuns, problems };
	}
	if (!work) throw new StepFailure("no agent run finished", false, "agent");

	const manifest = await readManifest(work.manifestDir);
	await ws.push(work).catch((err) => {
		throw new StepFailure(
			`push failed: ${(err as Error).message}`,
			isTransientFailure(String(err)),
			"publish",
		);
	});
	await timeline.add("publish.pushed", `pushed ${branch}`);
	const pr = await publish(
		deps,
		repo,
		branch,
		conventionalTitle(manifest.prTitle),
		prBody({ body: manifest.prBody, issueUrl: issue.url, issueKey: issue.key, runId: run.runId }),
	);
	await timeline.add("publish.pr", `${pr.created ? "opened" : "updated"} ${pr.url}`, {
		prUrl: pr.url,
	});
	if (!work.native) await ws.cleanup();
	return { outcome: "succeeded", branch, prUrl: pr.url, provider };
}

const lastLines = (text: string, n = 10) => text.trim().split("\n").slice(-n).join("\n");

interface CheckProblem extends Problem {
	kind: "gate" | "validation";
}

/** The gates, then (when they pass) the validate commands. */
async function check(
	ws: Workspace,
	work: Work,
	repo: RepoConfig,
	env: NodeJS.ProcessEnv,
	deadlineAt: number,
	timeline: Timeline,
): Promise<CheckProblem[]> {
	const commitsAhead = await ws.commitsAhead(work);
	const changedFiles = commitsAhead ? await ws.changedFiles(work) : [];
	const manifestError = await readManifest(work.manifestDir).then(
		() => undefined,
		(err: Error) => err.message,
	);
	const gates = gateProblems({
		commitsAhead,
		changedFiles,
		manifestError,
		allowWorkflowChanges: repo.allow_workflow_changes,
		baseBranch: repo.base_branch,
	});
	if (gates.length) return gates.map((g) => ({ kind: "gate", summary: g.message }));
	if (!repo.validate.length) return [];
	const failure = await runCommands(repo.validate, { cwd: work.dir, env, deadlineAt });
	if (Date.now() >= deadlineAt)
		throw new StepFailure("step timed out during validation", false, "timeout");
	if (!failure) {
		await timeline.add("validation.passed", `validate passed: ${repo.validate.join(" && ")}`);
		return [];
	}
	return [
		{ kind: "validation", summary: describeFailure("validate", failure), output: failure.output },
	];
}

async function publish(
	deps: TaskDeps,
	repo: RepoConfig,
	branch: string,
	title: string,
	body: string,
): Promise<{ url: string; created: boolean }> {
	try {
		return await openPullRequest(codeHost(deps.githubToken, deps.env.GITHUB_API_URL), {
			slug: repo.slug as string,
			head: branch,
			base: repo.base_branch,
			title,
			body,
		});
	} catch (err) {
		const status = (err as { status?: number }).status;
		const transient = status === undefined || status === 429 || status >= 500;
		throw new StepFailure(
			`opening the pull request failed: ${(err as Error).message}`,
			transient,
			"publish",
		);
	}
}
