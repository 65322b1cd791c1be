import type { RoundInput } from "../../domain/follow-up";
import type { WorkFacts } from "../../domain/gates";
import { freshGuardrails } from "../../domain/guardrails";
import { headTail, lastLines, redact } from "../../domain/redact";
import type { Step } from "../../domain/run";
import { isTransientFailure } from "../../domain/transient";
import { commandEnv } from "../agents/provider";
import { type Attempt, chainContext, type ImplementInputs, stopAgent } from "../context/attempt";
import { buildImplementPrompt, type RetryContext } from "../prompts/prompt";
import { StepFailure } from "../report/failure";
import type { Work, Workspace } from "../sandbox/workspace";
import { type CheckProblem, gates, problemsText, validate, workFacts } from "./check";
import { describeFailure, runCommands } from "./commands";
import { type ImplementContext, implement } from "./implement";

/** The work to publish: the commit the checks passed, or a follow-up round that changed nothing. */
export interface Checked {
	sha: string;
	work: Work;
	provider: string;
	/**
	 * A follow-up round's agent committed nothing: there is nothing to push
	 * (docs/follow-ups.md › Follow-ups).
	 */
	noChange?: boolean;
}

/**
 * Agent runs through the fallback chain until the work passes the checks, or retries run out.
 * Each agent run is followed by: its HEAD copied into the publish repository and the gates judged there;
 * validate; then every process the agent could influence stopped and HEAD read once more — it
 * must still be the commit the gates judged, which is the commit published. A follow-up round
 * whose agent commits nothing, and fails no other gate, ends there: nothing needed changing.
 */
export async function implementAndCheck(
	a: Attempt,
	s: ImplementInputs,
	ws: Workspace,
): Promise<Checked> {
	const { deps, timeline } = a;
	const { repo, deadlineAt } = s;
	const limits = s.config.limits;
	const commands = {
		env: commandEnv(deps.env),
		deadlineAt,
		user: a.scope.user,
		signal: a.heartbeat.signal,
	};
	const guardrails = freshGuardrails(
		await deps.store.guardrails(repo.name).catch(() => []),
		Date.now(),
	);
	// Where setup ran; cleared when the agent's processes (setup's services among them) are stopped.
	const setUp = new Set<string>();
	let retry: RetryContext | undefined;
	// What a follow-up round answers and the request were written by others: no secret the task
	// holds reaches the agent through them.
	const round = s.round && redactRound(s.round, deps.secrets);
	const request = a.run.request && {
		...a.run.request,
		text: redact(a.run.request.text, deps.secrets),
	};
	const ctx: ImplementContext = {
		...chainContext(a, s.config, deadlineAt),
		ws,
		nativeWorktree: repo.native_worktree === true,
		async setup(dir) {
			if (setUp.has(dir) || !repo.setup.length) return;
			setUp.add(dir);
			const run = () => runCommands(repo.setup, { cwd: dir, keepBackground: true, ...commands });
			const failure = await (a.egress ? a.egress.proxy.during("setup", run) : run());
			a.heartbeat.check();
			if (failure)
				throw new StepFailure(
					`${describeFailure("setup", failure)}: ${lastLines(failure.output)}`,
					isTransientFailure(failure.output),
					"setup",
				);
			await timeline.add("setup.finished", `setup ran: ${repo.setup.join(" && ")}`);
		},
		prompt: (native) =>
			buildImplementPrompt({
				issue: s.issue,
				repo: repo.name,
				branch: s.branch,
				baseBranch: repo.base_branch,
				round,
				request,
				scope: s.step.scope,
				previous: s.previous,
				dependencies: a.run.epicTask?.dependencies,
				allowWorkflowChanges: repo.allow_workflow_changes,
				nativeWorktree: native,
				guardrails,
				retry,
			}),
	};
	const validation = (v: NonNullable<Step["validation"]>) => a.heartbeat.write({ validation: v });
	const pinned = async (work: Work) =>
		ws.pin(work).catch((err) => {
			throw new StepFailure(
				`could not take the agent's commits for publishing: ${(err as Error).message}`,
				false,
				"gate",
			);
		});

	const maxRuns = 1 + limits.max_validation_retries;
	let work: Work | undefined;
	let from = 0;
	for (let n = 1; ; n++) {
		const done = await implement(ctx, from, work);
		({ index: from, work } = done);
		await a.heartbeat.write({
			provider: done.spec,
			validation: { agentRuns: n, status: "checking" },
		});
		await ctx.setup(work.dir);
		const judged = await pinned(work);
		const facts = await workFacts(
			ws,
			work,
			judged,
			{ repo, base: s.base, round: s.round !== undefined },
			deps.secrets,
		);
		let problems = gates(facts);
		if (s.round && (await nothingToChange(facts, problems, ws, work))) {
			await stopAgent(a);
			setUp.clear();
			await validation({ agentRuns: n, status: "passed" });
			return { sha: judged, work, provider: done.spec, noChange: true };
		}
		if (!problems.length) problems = await validate(work, repo, commands, timeline);
		a.heartbeat.check();
		if (!problems.length) {
			await stopAgent(a);
			setUp.clear();
			const head = await ws.head(work);
			if (head === judged) {
				await validation({ agentRuns: n, status: "passed" });
				return { sha: judged, work, provider: done.spec };
			}
			problems = gates({ ...facts, moved: [judged, head] });
		}
		const failure = problems.some((p) => p.kind === "validation") ? "validation" : "gate";
		a.lesson ??= {
			failure,
			summary: problems.map((p) => p.lesson).join("; "),
			provider: done.spec,
		};
		const final = n >= maxRuns;
		await reportProblems(a, problems, { n, maxRuns, final, failure });
		if (final) throw new StepFailure(problemsText(problems), false, failure);
		retry = { run: n + 1, final: n + 1 >= maxRuns, problems };
	}
}

/**
 * A follow-up round's agent found nothing to change: it committed nothing and failed no other gate. Edits
 * left uncommitted are work it forgot to commit, which the commit gate sends back.
 */
async function nothingToChange(
	facts: WorkFacts,
	problems: readonly CheckProblem[],
	ws: Workspace,
	work: Work,
): Promise<boolean> {
	if (!facts.onBase || facts.commitsAhead !== 0) return false;
	if (!problems.every((p) => p.gate === "commit")) return false;
	return !(await ws.edited(work));
}

/** An agent run's problems on the step (validation state) and the timeline. */
async function reportProblems(
	a: Attempt,
	problems: readonly CheckProblem[],
	r: { n: number; maxRuns: number; final: boolean; failure: "validation" | "gate" },
): Promise<void> {
	const summary = problems.map((p) => p.summary).join("; ");
	await a.heartbeat.write({
		validation: {
			agentRuns: r.n,
			status: r.final ? "failed" : "checking",
			lastFailure: headTail(redact(summary, a.deps.secrets), 1000),
		},
	});
	const output = problems.flatMap((p) => (p.output ? [p.output] : [])).join("\n");
	await a.timeline.add(
		r.failure === "validation" ? "validation.failed" : "gate.refused",
		`${summary}${r.final ? "" : `; running the agent again (${r.n + 1} of ${r.maxRuns})`}`,
		output ? { output } : undefined,
	);
}

/** A follow-up round's texts (CI output, reviews, instructions) with the task's secrets redacted. */
function redactRound(round: RoundInput, secrets: readonly string[]): RoundInput {
	const r = (text: string) => redact(text, secrets);
	const maybe = (text?: string) => (text === undefined ? undefined : r(text));
	return {
		...round,
		failures: round.failures?.map((f) => ({
			...f,
			summary: maybe(f.summary),
			log: maybe(f.log),
			annotations: f.annotations.map((x) => ({ ...x, message: r(x.message) })),
		})),
		reviews: round.reviews?.map((v) => ({ ...v, body: maybe(v.body) })),
		comments: round.comments?.map((c) => ({ ...c, body: r(c.body), diffHunk: maybe(c.diffHunk) })),
		instructions: round.instructions?.map((i) => ({ ...i, body: r(i.body) })),
	};
}
