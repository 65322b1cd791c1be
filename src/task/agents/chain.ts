import type { ModelSpec } from "../../config/schema";
import { usd } from "../../domain/cost";
import { redact } from "../../domain/redact";
import type { AgentRunUsage } from "../../domain/usage";
import { StepFailure } from "../attempt/failure";
import type { Heartbeat } from "../attempt/heartbeat";
import type { Timeline } from "../attempt/timeline";
import type { AgentUser } from "../sandbox/process";
import type { BudgetWatch } from "./budget";
import { type ChainAttempt, exhaustedError, exitText, failureVerdict } from "./fallback";
import { PROVIDERS } from "./providers";
import { type AgentReport, agentEnv, type LiveUsage, type Provider } from "./providers/provider";
import { supervise } from "./supervise";

/** What every agent run of a step shares: the models, limits and supervision. */
export interface ChainContext {
	models: readonly ModelSpec[];
	env: NodeJS.ProcessEnv;
	secrets: readonly string[];
	staleSeconds: number;
	timeoutMinutes: number;
	deadlineAt: number;
	heartbeat: Heartbeat;
	timeline: Timeline;
	/** Files for the agent that must not be committed (a long prompt). */
	scratchDir: string;
	/** The agent's own user, when the task has one. */
	user?: AgentUser;
	/** Where each agent run's model, outcome and usage is recorded, for the attempt's report. */
	agentRuns: AgentRunUsage[];
	/** The run's budget, when the step was launched with one. */
	budget?: BudgetWatch;
}

/** One model's run: where, with what prompt, and how to see it is active. */
export interface Turn {
	cwd: string;
	prompt: string;
	/** Claude Code's own worktree name (`--worktree`). */
	nativeWorktree?: string;
	/** A fingerprint of the agent's directory: a change counts as activity. */
	probe?: () => Promise<string>;
}

export interface TurnHooks {
	/** Prepares the model's run (directory, setup, prompt). */
	turn(provider: Provider): Promise<Turn>;
	/** Clears what a model that failed transiently left, before the next one. */
	reset(): Promise<void>;
}

/**
 * One agent run through the fallback chain (README › Providers and models): each model in turn from `from`, supervised;
 * the next only after a transient failure. Throws StepFailure when the chain stops.
 */
export async function runChain(
	ctx: ChainContext,
	from: number,
	hooks: TurnHooks,
): Promise<{ index: number; spec: string; turn: Turn }> {
	const attempts: ChainAttempt[] = [];
	for (let i = from; i < ctx.models.length; i++) {
		const m = ctx.models[i] as ModelSpec;
		const provider = PROVIDERS[m.provider];
		const env = agentEnv(m.provider, ctx.env);
		const next = ctx.models[i + 1]?.spec;
		ctx.heartbeat.check();
		const unavailable = await provider.unavailable(env, m.model, ctx.user);
		if (unavailable) {
			attempts.push({ spec: m.spec, reason: unavailable, transient: true });
			await ctx.timeline.add(
				"agent.unavailable",
				`${unavailable}${next ? `; trying ${next}` : ""}`,
				{
					provider: m.spec,
				},
			);
			continue;
		}
		ctx.budget?.before();
		const turn = await hooks.turn(provider);
		await ctx.heartbeat.started(m.spec);
		await ctx.timeline.add(
			"agent.started",
			`${m.spec} started${turn.nativeWorktree ? " in its own worktree" : ""}`,
			{ provider: m.spec },
		);
		const timeoutMs = ctx.deadlineAt - Date.now();
		if (timeoutMs <= 0) throw timedOut(ctx);
		const watch = ctx.budget && liveWatch(ctx.budget, m);
		const { result, stuck } = await supervise(
			(io) =>
				provider.run(turn.prompt, {
					cwd: turn.cwd,
					model: m.model,
					env,
					timeoutMs,
					onOutput: io.onOutput,
					signal: watch ? AbortSignal.any([io.signal, watch.signal]) : io.signal,
					nativeWorktree: turn.nativeWorktree,
					scratchDir: ctx.scratchDir,
					user: ctx.user,
					onUsage: watch?.onUsage,
				}),
			{
				staleMs: ctx.staleSeconds * 1000,
				heartbeat: ctx.heartbeat,
				timeline: ctx.timeline,
				label: m.spec,
				probe: turn.probe,
				secrets: ctx.secrets,
			},
		);
		const { turns, usage, servedModel } = result.report ?? {};
		const stopped = watch?.signal.aborted === true;
		const run = agentRun(m, { ok: result.ok && !stopped, turns, usage, servedModel });
		ctx.agentRuns.push(run);
		// Counted now, so a run without a price is said at once (a CLI that reports at the end).
		ctx.budget?.spent();
		await ctx.budget?.settle();
		ctx.heartbeat.check();
		if (stopped && ctx.budget) {
			const failure = ctx.budget.stop();
			await ctx.timeline.add("agent.failed", `${m.spec}: ${failure.message}`, {
				provider: m.spec,
				transient: false,
				turns,
				usage,
				budget: failure.budget,
			});
			throw failure;
		}
		if (result.timedOut || (!result.ok && Date.now() >= ctx.deadlineAt)) throw timedOut(ctx);
		if (result.ok) {
			await ctx.timeline.add("agent.finished", `${m.spec} finished${usageText(result.report)}`, {
				provider: m.spec,
				turns,
				usage,
			});
			return { index: i, spec: m.spec, turn };
		}
		const verdict = failureVerdict(m.spec, { ...result, stuck }, ctx.staleSeconds);
		const reason = redact(verdict.reason, ctx.secrets);
		attempts.push({ spec: m.spec, reason, transient: verdict.transient });
		await ctx.timeline.add(
			"agent.failed",
			`${reason}${verdict.transient && next ? `\n(transient: trying ${next})` : ""}`,
			{ provider: m.spec, transient: verdict.transient, turns, usage, error: result.report?.error },
		);
		if (!verdict.transient)
			throw new StepFailure(
				reason,
				false,
				"agent",
				`${m.spec} ${exitText(result.exitCode, result.signal)}`,
			);
		await hooks.reset();
	}
	throw new StepFailure(exhaustedError(attempts), true, "agent");
}

/**
 * ": 12 turns, 1,234 tokens in (+5,000 cached), 567 out, $0.12 by its CLI's count" — what the run
 * reported; its cost is decided when the attempt is recorded (src/domain/cost.ts).
 */
function usageText(report: AgentReport | undefined): string {
	const u = report?.usage;
	const parts = [
		report?.turns !== undefined ? `${report.turns} turns` : undefined,
		u
			? `${u.inputTokens.toLocaleString("en")} tokens in${u.cacheReadTokens ? ` (+${u.cacheReadTokens.toLocaleString("en")} cached)` : ""}, ${u.outputTokens.toLocaleString("en")} out`
			: undefined,
		u?.costUsd !== undefined ? `${usd(u.costUsd)} by its CLI's count` : undefined,
	].filter(Boolean);
	return parts.length ? `: ${parts.join(", ")}` : "";
}

/** One agent run as the attempt records it; the model it served prices an entry that names none. */
function agentRun(m: ModelSpec, run: Omit<AgentRunUsage, "model">): AgentRunUsage {
	const { servedModel, ...rest } = run;
	return { model: m.spec, ...(servedModel && !m.model ? { servedModel } : {}), ...rest };
}

/**
 * Watches one agent run's usage as it streams: aborts it, as a timeout would, once the run's
 * spend passes the limit. The CLI's closing summary stops nothing (no more is asked of the model);
 * the next run's check counts it.
 */
function liveWatch(budget: BudgetWatch, m: ModelSpec) {
	const controller = new AbortController();
	return {
		signal: controller.signal,
		onUsage(live: LiveUsage) {
			if (controller.signal.aborted || live.final) return;
			const current = agentRun(m, { ok: false, usage: live.usage, servedModel: live.servedModel });
			if (budget.passed(current)) controller.abort();
		},
	};
}

function timedOut(ctx: ChainContext): StepFailure {
	return new StepFailure(`step timed out after ${ctx.timeoutMinutes} minutes`, false, "timeout");
}
