import { loadConfig } from "../config/load";
import type { LisaConfig } from "../config/schema";
import { readSettings } from "../config/settings";
import { prUrls, type Run } from "../domain/run";
import { isTerminalRun } from "../domain/states";
import { issueQuery } from "../domain/workflow";
import type { TrackerIssue } from "../integrations/tracker";
import { StartRefused } from "../local/claims";
import { startLocalStack } from "../local/stack";
import { nextIssue, type PollDeps, recoverOrphans } from "../pipeline/poll";
import { requestRun } from "../pipeline/request";
import { cancelRequested } from "../queue/messages";
import { trackerFactory } from "../runtime/deps";
import { agentsLine } from "./doctor";
import { shown } from "./format";

// `lisa run`: the original CLI's polling loop, for teams without a public URL. It starts the local
// stack in this process and feeds it through the same intake queue a webhook uses, one issue at a
// time: orphan recovery, then fetch → run → wait → next.

export interface RunOptions {
	/** One issue, then stop. */
	once: boolean;
	/** Keep polling when no issue waits (every `intervalSeconds`) instead of stopping. */
	watch: boolean;
	/** This issue (id, key or URL) only; implies once. */
	issue?: string;
	/** Stop after this many issues (0: no limit). */
	limit: number;
	dryRun: boolean;
	intervalSeconds: number;
}

export interface LoopContext {
	deps: PollDeps & { runUrl(runId: string): string };
	config: LisaConfig;
	print(line: string): void;
	/** Aborted by SIGINT/SIGTERM: the loop stops after cancelling the active run. */
	signal: AbortSignal;
}

export interface LoopResult {
	runs: { runId: string; issue: string; status: string }[];
	recovered: string[];
}

const issueName = (i: Pick<TrackerIssue, "id" | "key">) => i.key ?? i.id;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
	return new Promise((resolve) => {
		if (signal.aborted) return resolve();
		const timer = setTimeout(done, ms);
		function done() {
			clearTimeout(timer);
			signal.removeEventListener("abort", done);
			resolve();
		}
		signal.addEventListener("abort", done);
	});
}

/** Waits until the run finished and its tracker updates are done (or the loop is stopped). */
async function waitForRun(ctx: LoopContext, runId: string): Promise<Run | undefined> {
	for (;;) {
		const run = await ctx.deps.store.getRun(runId);
		if (run && isTerminalRun(run.status) && run.tracker.done) return run;
		if (ctx.signal.aborted) return run;
		await sleep(500, ctx.signal);
	}
}

/** Cancels the active run through the pipeline (the issue goes back to pick_from) and waits ≤ 5 s. */
async function cancelActive(ctx: LoopContext, runId: string): Promise<void> {
	await ctx.deps.queue.send(
		"events",
		cancelRequested({
			runId,
			reason: "lisa run was interrupted",
			requestedAt: ctx.deps.now().toISOString(),
		}),
	);
	const deadline = Date.now() + 5_000;
	while (Date.now() < deadline) {
		const run = await ctx.deps.store.getRun(runId);
		if (run && isTerminalRun(run.status) && run.tracker.done) return;
		await new Promise((r) => setTimeout(r, 200));
	}
}

export async function pollLoop(ctx: LoopContext, opts: RunOptions): Promise<LoopResult> {
	const { config, print } = ctx;
	const sc = config.source_config;
	const result: LoopResult = { runs: [], recovered: [] };
	try {
		for (const issue of await recoverOrphans(ctx.deps, config)) {
			print(
				`Recovered ${issueName(issue)}: left in "${sc.in_progress}" by a dead run, back to "${sc.pick_from}"`,
			);
			result.recovered.push(issueName(issue));
		}
	} catch (err) {
		print(`Orphan recovery stopped: ${(err as Error).message}`);
	}

	const once = opts.once || opts.issue !== undefined;
	for (let session = 1; !ctx.signal.aborted; session++) {
		if (opts.limit > 0 && session > opts.limit) {
			print(`Reached --limit ${opts.limit}. Done.`);
			break;
		}
		let issue: TrackerIssue | undefined;
		try {
			issue = opts.issue
				? await ctx.deps.tracker(config.source).fetchIssue(opts.issue)
				: await nextIssue(ctx.deps, config);
		} catch (err) {
			print(`Could not fetch an issue from ${config.source}: ${(err as Error).message}`);
			if (once || !opts.watch) break;
			await sleep(opts.intervalSeconds * 1000, ctx.signal);
			continue;
		}
		if (!issue) {
			if (!opts.watch) {
				print(`No more issues with label '${sc.label}' in "${sc.pick_from}". Done.`);
				break;
			}
			session--;
			await sleep(opts.intervalSeconds * 1000, ctx.signal);
			continue;
		}

		const runId = await requestRun(ctx.deps, config.source, issue, "poll");
		print(
			`Session ${session}: ${issueName(issue)} "${shown(issue.title, 200)}" → run ${runId} (${ctx.deps.runUrl(runId)})`,
		);
		const run = await waitForRun(ctx, runId);
		if (ctx.signal.aborted && !(run && isTerminalRun(run.status))) {
			print(`Interrupted: cancelling run ${runId} (the issue goes back to "${sc.pick_from}")…`);
			await cancelActive(ctx, runId);
			result.runs.push({ runId, issue: issueName(issue), status: "cancelled" });
			break;
		}
		const status = run?.status ?? "unknown";
		result.runs.push({ runId, issue: issueName(issue), status });
		if (status === "succeeded") print(`  succeeded: ${prUrls(run as Run).join(", ")}`);
		else print(`  ${status}: ${run?.error ? shown(run.error, 300) : "no reason recorded"}`);
		if (once) break;
	}
	return result;
}

/** What the original printed for `--dry-run`, plus the issue that would be picked. */
async function dryRun(
	config: LisaConfig,
	opts: RunOptions,
	tracker: ReturnType<ReturnType<typeof trackerFactory>>,
	print: (l: string) => void,
): Promise<void> {
	const sc = config.source_config;
	print(
		opts.issue
			? `[dry-run] Would fetch issue '${opts.issue}'`
			: `[dry-run] Would fetch issue from ${config.source} (${sc.team ?? "-"}/${sc.project ?? "-"})`,
	);
	print("[dry-run] Workflow mode: worktree");
	print(`[dry-run] Models priority: ${config.models.join(" → ")}`);
	print("[dry-run] Then implement, push, create PR, and update issue status");
	try {
		const issue = opts.issue
			? await tracker.fetchIssue(opts.issue)
			: (await tracker.nextIssues(issueQuery(sc)))[0];
		print(
			issue
				? `[dry-run] Next issue: ${issueName(issue)} "${shown(issue.title, 200)}"`
				: `[dry-run] No issue with label '${sc.label}' in "${sc.pick_from}"`,
		);
	} catch (err) {
		print(`[dry-run] Could not fetch an issue: ${(err as Error).message}`);
	}
}

/** Credentials the source and the PRs need, as the original checked before running. */
function missingEnv(config: LisaConfig, env: NodeJS.ProcessEnv): string[] {
	const need = env.GITHUB_APP_ID?.trim() ? [] : ["GITHUB_TOKEN"];
	if (config.source === "linear") need.push("LINEAR_API_KEY");
	if (config.source === "trello") need.push("TRELLO_API_KEY", "TRELLO_TOKEN");
	return need.filter((k) => !env[k]?.trim());
}

/** `lisa run`; returns the process exit code. */
export async function runCommand(
	opts: RunOptions,
	env: NodeJS.ProcessEnv,
	print: (line: string) => void = (l) => console.log(l),
): Promise<number> {
	// The loop's API listens on a free port unless PORT says otherwise, so it never clashes with `npm start`.
	const withPort = { ...env, PORT: env.PORT ?? "0" };
	const settings = readSettings(withPort);
	const state = loadConfig(settings.configPath);
	if (state.status === "missing") {
		print(
			`No configuration found at ${state.file}. Copy .lisa/config.example.yaml there (or set LISA_CONFIG).`,
		);
		return 1;
	}
	if (state.status === "invalid") {
		print(state.error.message);
		return 1;
	}
	const { config } = state;
	const missing = missingEnv(config, env);
	if (missing.length) {
		print(`Missing environment variables: ${missing.join(", ")}`);
		print("Export them in your shell (e.g. in ~/.zshrc or ~/.bashrc) and run again.");
		return 1;
	}
	if (opts.dryRun) {
		await dryRun(config, opts, trackerFactory(settings, () => state)(config.source), print);
		return 0;
	}

	let stack: Awaited<ReturnType<typeof startLocalStack>>;
	try {
		stack = await startLocalStack({ env: withPort });
	} catch (err) {
		// What the start knew is wrong (another stack on the data dir, the port) is its own sentence.
		if (!(err instanceof StartRefused)) throw err;
		print(`lisa run: ${err.message}`);
		return 1;
	}
	const sc = config.source_config;
	print(
		`Lisa is polling ${config.source} for label '${sc.label}' in "${sc.pick_from}"; runs at ${stack.url} (Authorization: Bearer ${stack.apiToken})`,
	);
	print(agentsLine(stack.agentUids, stack.agentsConfined).trim());

	const controller = new AbortController();
	const onSignal = () => {
		if (controller.signal.aborted) process.exit(1); // a second signal forces the exit
		controller.abort();
	};
	process.on("SIGINT", onSignal);
	process.on("SIGTERM", onSignal);
	try {
		const result = await pollLoop(
			{
				deps: stack.deps,
				config,
				print,
				signal: controller.signal,
			},
			opts,
		);
		if (controller.signal.aborted) return 1;
		const last = result.runs[result.runs.length - 1];
		return (opts.once || opts.issue) && last && last.status !== "succeeded" ? 1 : 0;
	} finally {
		process.off("SIGINT", onSignal);
		process.off("SIGTERM", onSignal);
		await stack.stop();
	}
}
