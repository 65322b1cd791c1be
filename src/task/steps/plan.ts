import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { RepoConfig } from "../../config/schema";
import { PLAN_FILE, type Plan, type PlanVerdict, readPlan } from "../../domain/plan";
import { redact } from "../../domain/redact";
import { type ChainContext, runChain } from "../agents/chain";
import {
	type Attempt,
	chainContext,
	checkoutFailure,
	deadlineOf,
	gitFor,
	runInputs,
	stopAgent,
} from "../attempt/context";
import { StepFailure } from "../attempt/failure";
import { launchedRepo } from "../attempt/repos";
import { readAgentFile } from "../sandbox/files";
import type { Git } from "../sandbox/git";
import { handOver } from "../sandbox/identity";
import { buildPlanningPrompt } from "./prompt";

/** An invalid plan is shown to the agent once; the second invalid plan fails the step. */
const PLAN_TRIES = 2;

/**
 * The planning step of a multi-repo run (README › Multi-repo runs): every configured repo checked out at its
 * base, the agent asked for `.lisa-plan.json` only, the plan validated (one retry with the
 * errors). Nothing of this workspace is ever pushed: the checkouts are detached and thrown away.
 */
export async function executePlan(a: Attempt): Promise<{ plan: Plan; provider: string }> {
	const { req, timeline } = a;
	const { config, issue, step } = runInputs(a.run, req.stepIndex);
	const names = config.repos.map((r) => r.name);
	const place = new PlanningWorkspace(a, req.workspace, config.repos);
	await place.prepare();
	await timeline.add("plan.checked_out", `checked out ${names.join(", ")} read-only for planning`);

	const ctx: ChainContext = {
		...chainContext(a, config, deadlineOf(config, step)),
		scratchDir: place.scratch,
	};
	const tries: string[][] = [];
	let from = 0;
	for (let n = 1; n <= PLAN_TRIES; n++) {
		const prompt = buildPlanningPrompt({
			issue,
			repos: config.repos.map((r) => ({
				name: r.name,
				dir: `repos/${r.name}`,
				baseBranch: r.base_branch,
				match: r.match,
			})),
			planFile: place.planFile,
			retryErrors: tries[tries.length - 1],
		});
		const done = await runChain(ctx, from, {
			turn: async () => {
				await place.clearPlan();
				return { cwd: place.dir, prompt, probe: () => place.fingerprint() };
			},
			reset: () => place.restore(),
		});
		from = done.index;
		await stopAgent(a);
		await place.restore();
		const verdict = await place.readPlan(names);
		if (verdict.ok) {
			// The scopes are the agent's words: they go to the run, the tracker and the next prompts.
			const plan = {
				steps: verdict.plan.steps.map((s) => ({ ...s, scope: redact(s.scope, a.deps.secrets) })),
			};
			await timeline.add("plan.valid", `plan (try ${n}): ${planText(plan)}`, {
				plan,
				provider: done.spec,
			});
			return { plan, provider: done.spec };
		}
		tries.push(verdict.errors);
		const again = n < PLAN_TRIES;
		await timeline.add(
			"plan.invalid",
			`invalid plan (try ${n}): ${verdict.errors.join("; ")}${again ? "; asking the agent again with these errors" : ""}`,
			{ errors: verdict.errors, provider: done.spec },
		);
	}
	throw new StepFailure(
		`the planning agent wrote an invalid plan ${PLAN_TRIES} times: ${tries
			.map((errors, i) => `try ${i + 1}: ${errors.join("; ")}`)
			.join(" | ")}`,
		false,
		"plan",
	);
}

const planText = (plan: Plan) => plan.steps.map((s) => `${s.repo} (order ${s.order})`).join(", ");

/**
 * `<workspace>/plan`: the agent's directory (a git repository, as some CLIs require one) with the
 * plan file and `repos/<name>`, a detached checkout of each repo's base.
 */
class PlanningWorkspace {
	readonly dir: string;
	readonly scratch: string;
	readonly planFile: string;
	private readonly heads = new Map<string, string>();

	constructor(
		private readonly a: Attempt,
		root: string,
		private readonly repos: readonly RepoConfig[],
	) {
		this.dir = path.join(root, "plan");
		this.scratch = path.join(root, "scratch");
		this.planFile = path.join(this.dir, PLAN_FILE);
	}

	private git(url?: string): Git {
		return gitFor(this.a, url);
	}

	private checkout(name: string): string {
		return path.join(this.dir, "repos", name);
	}

	/** Everything as the task's user (blobs fetched), then handed to the agent's user. */
	async prepare(): Promise<void> {
		await rm(this.dir, { recursive: true, force: true });
		await mkdir(path.join(this.dir, "repos"), { recursive: true });
		await mkdir(this.scratch, { recursive: true });
		await this.git().run(this.dir, ["init", "--quiet"], { task: true });
		for (const repo of this.repos) {
			// Where the token goes comes from the launch; the snapshot names the base to check out.
			const { url } = launchedRepo(this.a.repos, repo.name);
			const git = this.git(url);
			const dir = this.checkout(repo.name);
			try {
				await git.run(
					this.dir,
					["clone", "--filter=blob:none", "--no-checkout", "--quiet", "--", url, dir],
					{ remote: true },
				);
				await git.run(dir, ["checkout", "--quiet", "--detach", `origin/${repo.base_branch}`], {
					remote: true,
				});
				this.heads.set(repo.name, await git.run(dir, ["rev-parse", "HEAD"], { task: true }));
			} catch (err) {
				throw checkoutFailure(repo.name, err);
			}
		}
		if (this.a.scope.user) await handOver([this.dir, this.scratch], this.a.scope.user);
	}

	async clearPlan(): Promise<void> {
		await rm(this.planFile, { force: true });
	}

	async readPlan(repos: readonly string[]): Promise<PlanVerdict> {
		const text = await readAgentFile(this.planFile, 1024 * 1024).catch(() => undefined);
		if (text === undefined) return { ok: false, errors: [`the agent did not write ${PLAN_FILE}`] };
		return readPlan(text, repos);
	}

	async fingerprint(): Promise<string> {
		return this.git().run(this.dir, ["status", "--porcelain", "--untracked-files=all"], {
			timeoutMs: 10_000,
		});
	}

	/** Puts back any checkout the agent changed (noted on the run): planning never implements. */
	async restore(): Promise<void> {
		const changed: string[] = [];
		for (const [name, head] of this.heads) {
			const git = this.git();
			const dir = this.checkout(name);
			const [now, status] = await Promise.all([
				git.run(dir, ["rev-parse", "HEAD"]).catch(() => ""),
				git.run(dir, ["status", "--porcelain", "--untracked-files=all"]).catch(() => "?"),
			]);
			if (now === head && !status) continue;
			changed.push(name);
			await git.run(dir, ["checkout", "--quiet", "--force", "--detach", head]);
			await git.run(dir, ["clean", "-ffdxq"]);
		}
		if (changed.length)
			await this.a.timeline.add(
				"plan.discarded",
				`the planning agent changed ${changed.join(", ")}; the changes were discarded (planning does not implement)`,
			);
	}
}
