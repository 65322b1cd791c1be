import {
	type ChainAttempt,
	exhaustedError,
	failureVerdict,
	type ModelSpec,
} from "../../shared/domain/fallback";
import { MANIFEST_FILE } from "../../shared/domain/prompt";
import { redact } from "../../shared/domain/redact";
import { StepFailure } from "./failure";
import type { Heartbeat } from "./heartbeat";
import { readManifest } from "./manifest";
import { PROVIDERS } from "./providers";
import { agentEnv } from "./providers/provider";
import { supervise } from "./supervise";
import type { Timeline } from "./timeline";
import type { Work, Workspace } from "./workspace";

export interface ImplementContext {
	ws: Workspace;
	models: readonly ModelSpec[];
	env: NodeJS.ProcessEnv;
	secrets: readonly string[];
	staleSeconds: number;
	timeoutMinutes: number;
	deadlineAt: number;
	/** Claude Code may create its own worktree (repos[].native_worktree). */
	nativeWorktree: boolean;
	heartbeat: Heartbeat;
	timeline: Timeline;
	/** The prompt for this run; `manifestPath` is set when the agent uses its own worktree. */
	prompt: (native?: { manifestPath: string }) => string;
	/** Runs the repo's setup in a directory once, before an agent or the checks use it. */
	setup: (dir: string) => Promise<void>;
}

export interface Implemented {
	/** The index in `models` of the model that succeeded: later runs of the step start there. */
	index: number;
	spec: string;
	work: Work;
}

const nativeName = (branch: string) =>
	`lisa-${branch.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 60)}`;

/**
 * One implementation run through the fallback chain (seed 000): each model in turn from `from`,
 * supervised; the next only after a transient failure. Throws StepFailure when the chain stops.
 * Without `work` (the first run) a failed model's leftovers are discarded before the next one;
 * with it (a validation retry) every model continues that work.
 */
export async function implement(
	ctx: ImplementContext,
	from: number,
	work?: Work,
): Promise<Implemented> {
	const attempts: ChainAttempt[] = [];
	for (let i = from; i < ctx.models.length; i++) {
		const m = ctx.models[i] as ModelSpec;
		const provider = PROVIDERS[m.provider];
		const env = agentEnv(m.provider, ctx.env);
		const next = ctx.models[i + 1]?.spec;
		if (!(await provider.isAvailable(env, m.model))) {
			const reason = `${m.provider} is not installed or not in PATH`;
			attempts.push({ spec: m.spec, reason, transient: true });
			await ctx.timeline.add("agent.unavailable", `${reason}${next ? `; trying ${next}` : ""}`, {
				provider: m.spec,
			});
			continue;
		}
		const native = !work && ctx.nativeWorktree && provider.supportsNativeWorktree === true;
		const cwd = work?.dir ?? (native ? await ctx.ws.nativeRoot() : await ctx.ws.lisaTree());
		if (!work && !native) await ctx.setup(cwd);
		const prompt = ctx.prompt(
			native || work?.native ? { manifestPath: `${ctx.ws.clone}/${MANIFEST_FILE}` } : undefined,
		);
		await ctx.heartbeat.set("just_started");
		await ctx.timeline.add(
			"agent.started",
			`${m.spec} started${native ? " in its own worktree" : ""}`,
			{ provider: m.spec },
		);
		const timeoutMs = ctx.deadlineAt - Date.now();
		if (timeoutMs <= 0) throw timedOut(ctx);
		const { result, stuck } = await supervise(
			(io) =>
				provider.run(prompt, {
					cwd,
					model: m.model,
					env,
					timeoutMs,
					onOutput: io.onOutput,
					signal: io.signal,
					nativeWorktree: native ? nativeName(ctx.ws.branch) : undefined,
					scratchDir: ctx.ws.scratch,
				}),
			{
				staleMs: ctx.staleSeconds * 1000,
				heartbeat: ctx.heartbeat,
				timeline: ctx.timeline,
				label: m.spec,
				probe: () => ctx.ws.fingerprint(cwd),
			},
		);
		if (result.timedOut || (!result.ok && Date.now() >= ctx.deadlineAt)) throw timedOut(ctx);
		if (result.ok) {
			await ctx.timeline.add("agent.finished", `${m.spec} finished`, { provider: m.spec });
			return { index: i, spec: m.spec, work: work ?? (await locate(ctx, native, cwd)) };
		}
		const verdict = failureVerdict(m.spec, { ...result, stuck }, ctx.staleSeconds);
		const reason = redact(verdict.reason, ctx.secrets);
		attempts.push({ spec: m.spec, reason, transient: verdict.transient });
		await ctx.timeline.add(
			"agent.failed",
			`${reason}${verdict.transient && next ? `\n(transient: trying ${next})` : ""}`,
			{ provider: m.spec, transient: verdict.transient },
		);
		if (!verdict.transient) throw new StepFailure(reason, false, "agent");
		if (!work) await ctx.ws.discard();
	}
	throw new StepFailure(exhaustedError(attempts), true, "agent");
}

function timedOut(ctx: ImplementContext): StepFailure {
	return new StepFailure(`step timed out after ${ctx.timeoutMinutes} minutes`, false, "timeout");
}

/** Where the agent's work is after its first successful run. */
async function locate(ctx: ImplementContext, native: boolean, cwd: string): Promise<Work> {
	if (!native) return { dir: cwd, manifestDir: cwd, native: false };
	const manifest = await readManifest(ctx.ws.clone).catch(() => undefined);
	const dir = await ctx.ws.findNativeTree(manifest?.branch);
	if (!dir)
		throw new StepFailure(
			"claude finished, but Lisa found no worktree of its own to publish (no manifest branch, and not exactly one new worktree)",
			false,
			"gate",
		);
	return { dir, manifestDir: ctx.ws.clone, native: true };
}
