import type { ModelSpec } from "../../config/schema";
import { usd } from "../../domain/cost";
import { redact } from "../../domain/redact";
import type { AgentRunUsage, TokenUsage } from "../../domain/usage";
import type { Broker, Lease } from "../broker/broker";
import { brokerPlan, leasedEnv } from "../broker/keys";
import { modelAllowed } from "../broker/models";
import { StepFailure } from "../report/failure";
import type { Heartbeat } from "../report/heartbeat";
import type { Timeline } from "../report/timeline";
import type { AgentUser } from "../sandbox/process";
import type { BudgetWatch } from "./budget-watch";
import { type ChainAttempt, exhaustedError, exitText, failureVerdict } from "./fallback";
import {
	type AgentReport,
	type AgentResult,
	agentEnv,
	type LiveUsage,
	type Provider,
} from "./provider";
import { PROVIDERS } from "./providers";
import { supervise } from "./supervise";

/** What every agent run of a step shares: the models, limits and supervision. */
export interface ChainContext {
	models: readonly ModelSpec[];
	env: NodeJS.ProcessEnv;
	/** The secrets Lisa knows (redacted everywhere, refused in a commit); each lease's key joins them. */
	secrets: string[];
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
	/**
	 * The task's model broker: the agent reaches its model APIs through it
	 * (docs/security.md › Security).
	 */
	broker?: Broker;
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
 * One agent run through the fallback chain (docs/agent-task.md › Providers and models): each model
 * in turn from `from`, supervised; the next only after a transient failure. Throws StepFailure when
 * the chain stops.
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
		const brokered = openLease(ctx, m, env, watch);
		let result: AgentResult;
		let stuck: boolean;
		try {
			({ result, stuck } = await supervise(
				(io) =>
					provider.run(turn.prompt, {
						cwd: turn.cwd,
						model: m.model,
						env: brokered?.env ?? env,
						timeoutMs,
						onOutput: io.onOutput,
						signal: watch ? AbortSignal.any([io.signal, watch.signal]) : io.signal,
						nativeWorktree: turn.nativeWorktree,
						scratchDir: ctx.scratchDir,
						user: ctx.user,
						onUsage: watch && cliUsage(watch, brokered?.lease),
					}),
				{
					staleMs: ctx.staleSeconds * 1000,
					heartbeat: ctx.heartbeat,
					timeline: ctx.timeline,
					label: m.spec,
					probe: turn.probe,
					secrets: ctx.secrets,
				},
			));
		} finally {
			// What its last requests used is counted before the run is.
			await brokered?.lease?.close();
		}
		const { turns } = result.report ?? {};
		const stopped = watch?.signal.aborted === true;
		const run = agentRun(m, {
			ok: result.ok && !stopped,
			turns,
			...counted(result.report, brokered?.lease),
		});
		const { usage } = run;
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
			await ctx.timeline.add("agent.finished", `${m.spec} finished${usageText(run)}`, {
				provider: m.spec,
				turns,
				usage,
				...(run.reported ? { reported: run.reported } : {}),
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

/** ": 12 turns, 1,234 tokens in (+5,000 cached), 567 out" — tokens as counted, and what the CLI said. */
function usageText(run: AgentRunUsage): string {
	const tokens = (u: TokenUsage) =>
		`${u.inputTokens.toLocaleString("en")} tokens in${u.cacheReadTokens ? ` (+${u.cacheReadTokens.toLocaleString("en")} cached)` : ""}, ${u.outputTokens.toLocaleString("en")} out`;
	const cost = (u: TokenUsage | undefined) =>
		u?.costUsd !== undefined ? `${usd(u.costUsd)} by its CLI's count` : undefined;
	const parts = run.reported
		? [
				run.turns !== undefined ? `${run.turns} turns` : undefined,
				run.usage ? `${tokens(run.usage)} as the broker counted` : undefined,
				`its CLI reported ${[tokens(run.reported), cost(run.reported)].filter(Boolean).join(", ")}`,
			]
		: [
				run.turns !== undefined ? `${run.turns} turns` : undefined,
				run.usage ? tokens(run.usage) : undefined,
				cost(run.usage),
			];
	const shown = parts.filter(Boolean);
	return shown.length ? `: ${shown.join("; ")}` : "";
}

/** One agent run as the attempt records it; the model it served prices an entry that names none. */
function agentRun(m: ModelSpec, run: Omit<AgentRunUsage, "model">): AgentRunUsage {
	const { servedModel, ...rest } = run;
	return { model: m.spec, ...(servedModel && !m.model ? { servedModel } : {}), ...rest };
}

/**
 * Who counted a run's tokens: the broker, from the model's own answers, with the CLI's report kept
 * beside it. A run that asked the broker nothing spent nothing through it: its CLI's word stands
 * (it can only add cost), as it does for a key the broker does not keep.
 */
function counted(
	report: AgentReport | undefined,
	lease: Lease | undefined,
): Pick<AgentRunUsage, "usage" | "servedModel" | "reported"> {
	const answered = lease?.usage();
	if (!answered?.requests) return { usage: report?.usage, servedModel: report?.servedModel };
	return {
		usage: answered.usage,
		servedModel: answered.servedModel ?? report?.servedModel,
		...(report?.usage ? { reported: report.usage } : {}),
	};
}

/**
 * What the watch takes of the CLI's own usage: all of it without a lease; with one, nothing once
 * the broker has counted an answer (its count is the run's), as `counted` records it.
 */
function cliUsage(watch: ReturnType<typeof liveWatch>, lease: Lease | undefined) {
	return (live: LiveUsage) => {
		if (!lease?.usage().requests) watch.onUsage(live);
	};
}

/** The refusals of one agent run the timeline lists. */
const MAX_REFUSALS_SHOWN = 10;

/**
 * A lease of the broker for one agent run, when its provider's key is one the broker keeps: the
 * agent's environment gets the lease's key and URLs instead of the real ones. The broker asks the
 * budget before each request and tells the watch after each answer; what it refuses goes on the
 * timeline.
 */
function openLease(
	ctx: ChainContext,
	m: ModelSpec,
	env: NodeJS.ProcessEnv,
	watch: ReturnType<typeof liveWatch> | undefined,
): { lease?: Lease; env: NodeJS.ProcessEnv } | undefined {
	if (!ctx.broker) return undefined;
	const plan = brokerPlan(m.provider, ctx.env);
	// A key the broker keeps but cannot use (set without its endpoint) is not the agent's either.
	if (!plan.routes.length) return { env: leasedEnv(env, plan, undefined) };
	const budget = ctx.budget;
	let refused = 0;
	const lease = ctx.broker.lease({
		upstreams: plan.routes.map((r) => r.upstream),
		allows: (model) => modelAllowed(m.model, model),
		gate: budget
			? (usage) => {
					const current = agentRun(m, { ok: false, usage, servedModel: lease.usage().servedModel });
					if (!budget.reached(current)) return undefined;
					watch?.stop();
					return budget.stop(budget.spent(current)).message;
				}
			: undefined,
		onUsage: (usage, servedModel) => watch?.onUsage({ usage, servedModel }),
		onRefused: (r) => {
			// An agent that asks in a loop writes a bounded timeline.
			refused++;
			if (refused > MAX_REFUSALS_SHOWN) return;
			const more =
				refused === MAX_REFUSALS_SHOWN ? " (later refusals of this agent run are not listed)" : "";
			void ctx.timeline.add("broker.refused", `${m.spec}: ${r.reason}${more}`, {
				provider: m.spec,
				status: r.status,
				path: r.path,
				...(r.model ? { model: r.model } : {}),
			});
		},
	});
	// Good only on the task's loopback while the run lasts, but no one's to read or push.
	ctx.secrets.push(lease.key);
	return { lease, env: leasedEnv(env, plan, lease) };
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
		/** The broker refused a request for the budget: the run stops as if it had passed the limit. */
		stop: () => controller.abort(),
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
