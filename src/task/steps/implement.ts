import { type ChainContext, runChain } from "../agents/chain";
import { MANIFEST_FILE } from "../prompts/prompt";
import { StepFailure } from "../report/failure";
import type { Work, Workspace } from "../sandbox/workspace";
import { manifestBranch } from "./manifest";

export interface ImplementContext extends Omit<ChainContext, "scratchDir"> {
	ws: Workspace;
	/** Claude Code may create its own worktree (repos[].native_worktree). */
	nativeWorktree: boolean;
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
 * One implementation run through the fallback chain. Without `work` (the first run) a failed
 * model's leftovers are discarded before the next one; with it (a validation retry) every model
 * continues that work.
 */
export async function implement(
	ctx: ImplementContext,
	from: number,
	work?: Work,
): Promise<Implemented> {
	let native = false;
	const done = await runChain({ ...ctx, scratchDir: ctx.ws.scratch }, from, {
		async turn(provider) {
			native = !work && ctx.nativeWorktree && provider.supportsNativeWorktree === true;
			const cwd = work?.dir ?? (native ? await ctx.ws.nativeRoot() : await ctx.ws.lisaTree());
			if (!work && !native) await ctx.setup(cwd);
			return {
				cwd,
				prompt: ctx.prompt(
					native || work?.native ? { manifestPath: `${ctx.ws.clone}/${MANIFEST_FILE}` } : undefined,
				),
				nativeWorktree: native ? nativeName(ctx.ws.branch) : undefined,
				probe: () => ctx.ws.fingerprint(cwd),
			};
		},
		async reset() {
			if (!work) await ctx.ws.discard();
		},
	});
	return {
		index: done.index,
		spec: done.spec,
		work: work ?? (await locate(ctx, native, done.turn.cwd)),
	};
}

/** Where the agent's work is after its first successful run. */
async function locate(ctx: ImplementContext, native: boolean, cwd: string): Promise<Work> {
	if (!native) return { dir: cwd, manifestDir: cwd, native: false };
	const branch = await manifestBranch(ctx.ws.clone).catch(() => undefined);
	const dir = await ctx.ws.findNativeTree(branch);
	if (!dir)
		throw new StepFailure(
			"claude finished, but Lisa found no worktree of its own to publish (no manifest branch, and not exactly one new worktree)",
			false,
			"gate",
		);
	return { dir, manifestDir: ctx.ws.clone, native: true };
}
