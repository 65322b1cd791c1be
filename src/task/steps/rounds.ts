import { freshGuardrails } from "../../domain/guardrails";
import { headTail, lastLines, redact } from "../../domain/redact";
import type { Step } from "../../domain/run";
import { isTransientFailure } from "../../domain/transient";
import { commandEnv } from "../agents/providers/provider";
import { type Attempt, chainContext, type ImplementInputs, stopAgent } from "../attempt/context";
import { StepFailure } from "../attempt/failure";
import type { Work, Workspace } from "../sandbox/workspace";
import { type CheckProblem, gates, problemsText, validate, workFacts } from "./check";
import { describeFailure, runCommands } from "./commands";
import { type ImplementContext, implement } from "./implement";
import { buildImplementPrompt, type RetryContext } from "./prompt";

/**
 * Agent runs through the fallback chain until the work passes the checks, or retries run out.
 * Each round: the agent; its HEAD copied into the publish repository and the gates judged there;
 * validate; then every process the agent could influence stopped and HEAD read once more — it
 * must still be the commit the gates judged, which is the commit published.
 */
export async function implementAndCheck(
	a: Attempt,
	s: ImplementInputs,
	ws: Workspace,
): Promise<{ sha: string; work: Work; provider: string }> {
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
	const ctx: ImplementContext = {
		...chainContext(a, s.config, deadlineAt),
		ws,
		nativeWorktree: repo.native_worktree === true,
		async setup(dir) {
			if (setUp.has(dir) || !repo.setup.length) return;
			setUp.add(dir);
			const failure = await runCommands(repo.setup, {
				cwd: dir,
				keepBackground: true,
				...commands,
			});
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
				scope: s.step.scope,
				previous: s.previous,
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
		const facts = await workFacts(ws, work, judged, repo, deps.secrets);
		let problems = gates(facts);
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

/** A round's problems on the step (validation state) and the timeline. */
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
