import type { ProviderName, RepoConfig } from "../../shared/config/schema";
import { prBody } from "../../shared/domain/pr-body";
import { buildImplementPrompt } from "../../shared/domain/prompt";
import { redact } from "../../shared/domain/redact";
import { branchName, type Run, type StepReport } from "../../shared/domain/run";
import { isTransientFailure } from "../../shared/domain/transient";
import type { Logger } from "../../shared/log";
import type { Queue } from "../../shared/queue/sqs";
import type { DynamoStore } from "../../shared/store/dynamo";
import { checkout, commitsAhead, Git, push } from "./git";
import { Heartbeat } from "./heartbeat";
import { readManifest } from "./manifest";
import { PROVIDERS } from "./providers/cli";
import { agentEnv } from "./providers/provider";
import { codeHost, openPullRequest } from "./publish";

export interface TaskDeps {
	store: DynamoStore;
	queue: Queue;
	log: Logger;
	env: NodeJS.ProcessEnv;
	/** Secret values redacted from everything the task reports. */
	secrets: string[];
}

export interface StepRequest {
	runId: string;
	stepIndex: number;
	attempt: number;
	workspace: string;
}

/** A failure with the text to report and whether another attempt could succeed. */
export class StepFailure extends Error {
	constructor(
		message: string,
		readonly transient: boolean,
	) {
		super(message);
		this.name = "StepFailure";
	}
}

type Outcome = Omit<StepReport, "attempt" | "at">;

/**
 * One step attempt: prepare → implement → check → publish → report. A handled failure is reported
 * like a success (the message carries it), so the process exits 0 either way.
 */
export async function runStep(deps: TaskDeps, req: StepRequest): Promise<StepReport | undefined> {
	const run = await deps.store.getRun(req.runId);
	const step = run?.steps[req.stepIndex];
	if (!run || !step) throw new Error(`run ${req.runId} step ${req.stepIndex} does not exist`);
	if (step.attempt !== req.attempt) {
		deps.log.warn({ ...req, current: step.attempt }, "attempt superseded; exiting without work");
		return undefined;
	}
	const heartbeat = new Heartbeat(deps.store, req.runId, req.stepIndex, req.attempt, (err) =>
		deps.log.warn({ err }, "heartbeat write failed"),
	);
	heartbeat.start();
	let outcome: Outcome;
	try {
		outcome = await execute(deps, run, req, heartbeat);
		heartbeat.state = "completed";
	} catch (err) {
		heartbeat.state = "crashed";
		const transient = err instanceof StepFailure ? err.transient : isTransientFailure(String(err));
		outcome = { outcome: "failed", error: redact((err as Error).message, deps.secrets), transient };
	} finally {
		heartbeat.stop();
	}
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

async function execute(
	deps: TaskDeps,
	run: Run,
	req: StepRequest,
	heartbeat: Heartbeat,
): Promise<Outcome> {
	const config = run.config;
	const step = run.steps[req.stepIndex];
	if (!config || !run.issue || !step)
		throw new StepFailure("the run has no config snapshot or issue", false);
	const repo = config.repos.find((r) => r.name === step.repo);
	if (!repo) throw new StepFailure(`repo "${step.repo}" is not in the run's config`, false);
	if (!repo.slug)
		throw new StepFailure(
			`repo "${repo.name}" has no slug: set slug: owner/name in the config`,
			false,
		);

	const token = deps.env.GITHUB_TOKEN;
	const git = new Git(token, gitEnv(deps.env));
	const branch = branchName(
		config.branch_prefix,
		run.issue.key ?? run.issueKey ?? run.issueId,
		run.issue.title,
	);
	const ws = await checkout(git, repo.url, req.workspace, repo.base_branch, branch).catch((err) => {
		throw new StepFailure(
			`could not check out ${repo.name}: ${(err as Error).message}`,
			isTransientFailure(String(err)),
		);
	});

	const prompt = buildImplementPrompt({
		issue: run.issue,
		repo: repo.name,
		branch,
		baseBranch: repo.base_branch,
		scope: step.scope,
	});
	const provider = await implement(
		deps,
		config.models,
		prompt,
		ws.tree,
		config.limits.step_timeout_minutes,
		heartbeat,
	);

	if ((await commitsAhead(git, ws.tree, ws.baseSha)) === 0)
		throw new StepFailure("the agent finished without committing any change", false);
	const manifest = await readManifest(ws.tree).catch((err) => {
		throw new StepFailure((err as Error).message, false);
	});

	await push(git, ws.tree, branch).catch((err) => {
		throw new StepFailure(
			`push failed: ${(err as Error).message}`,
			isTransientFailure(String(err)),
		);
	});
	const pr = await publish(
		deps,
		repo,
		branch,
		manifest.prTitle,
		prBody({
			body: manifest.prBody,
			issueUrl: run.issue.url,
			issueKey: run.issue.key,
			runId: run.runId,
		}),
	);
	return { outcome: "succeeded", branch, prUrl: pr, provider };
}

/** Runs the first model of the chain (fallback over `models` arrives with the other providers). */
async function implement(
	deps: TaskDeps,
	models: string[],
	prompt: string,
	cwd: string,
	timeoutMinutes: number,
	heartbeat: Heartbeat,
): Promise<string> {
	const spec = models[0] ?? "claude";
	const [name, model] = [
		spec.split(":")[0] as ProviderName,
		spec.includes(":") ? spec.slice(spec.indexOf(":") + 1) : undefined,
	];
	const provider = PROVIDERS[name];
	if (!provider) throw new StepFailure(`provider "${name}" is not installed in this task`, true);
	await heartbeat.set("in_progress");
	const result = await provider.run(prompt, {
		cwd,
		model,
		env: agentEnv(name, deps.env),
		timeoutMs: timeoutMinutes * 60_000,
	});
	if (!result.ok) {
		const tailText = redact(result.output.trim().split("\n").slice(-15).join("\n"), deps.secrets);
		throw new StepFailure(
			`${name} exited with ${result.timedOut ? "a timeout" : `code ${result.exitCode}`}: ${tailText}`,
			isTransientFailure(result.output),
		);
	}
	return spec;
}

async function publish(
	deps: TaskDeps,
	repo: RepoConfig,
	branch: string,
	title: string,
	body: string,
): Promise<string> {
	try {
		const pr = await openPullRequest(codeHost(deps.env.GITHUB_TOKEN, deps.env.GITHUB_API_URL), {
			slug: repo.slug as string,
			head: branch,
			base: repo.base_branch,
			title,
			body,
		});
		return pr.url;
	} catch (err) {
		const status = (err as { status?: number }).status;
		const transient = status === undefined || status === 429 || status >= 500;
		throw new StepFailure(`opening the pull request failed: ${(err as Error).message}`, transient);
	}
}

/** git gets PATH/HOME and its own settings; the credential helper adds the token itself. */
function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const keep = [
		"PATH",
		"HOME",
		"LANG",
		"TMPDIR",
		"GIT_AUTHOR_NAME",
		"GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME",
		"GIT_COMMITTER_EMAIL",
		"GIT_SSH_COMMAND",
	];
	return Object.fromEntries(keep.flatMap((k) => (env[k] ? [[k, env[k]]] : [])));
}
