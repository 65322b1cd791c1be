import type { TimelineEventType } from "../../domain/events";
import { type ChainContext, runChain } from "../agents/chain";
import { type Attempt, chainContext, deadlineOf, runInputs, stopAgent } from "../context/attempt";
import { StepFailure } from "../report/failure";
import { type Checkout, PlanningWorkspace } from "./planning-workspace";

// A step that reads every repository and writes only files of its own: a multi-repo run's plan
// (docs/multi-repo.md › Multi-repo runs) and an epic's research and plan (docs/epics.md › Epics).
// Every repo checked out read-only, a fresh agent asked for the files, the files checked, and the
// agent asked again with what was wrong, up to `tries` times.

/** A timeline entry: its type, its message and its data. */
export type Entry = [TimelineEventType, string, Record<string, unknown>?];

export interface ReadOnlyPhase<T> {
	/** Who works here, for the timeline: "planning", "research", "epic planning". */
	purpose: string;
	/** What the checkouts are for, for the timeline: "planning", "the epic's research". */
	checkedOutFor: string;
	tries: number;
	/** The paths the agent writes (relative to the workspace's directory), cleared before each try. */
	files: string[];
	/** The prompt of try `n`; from the second on, `problems` are what the previous try left wrong. */
	prompt(place: PlanningWorkspace, checkouts: Checkout[], n: number, problems: string[]): string;
	/** The files checked: the value the step reports, or every problem (quoted to the next try). */
	check(
		place: PlanningWorkspace,
	): Promise<{ ok: true; value: T } | { ok: false; problems: string[] }>;
	accepted(value: T, n: number): Entry;
	rejected(problems: string[], n: number, again: boolean): Entry;
	/** The step's failure after the last try, from each try's problems. */
	failure(problems: string[][]): string;
}

/** The phase's tries: prompt, agent, restore, check; the checked value or a StepFailure. */
export async function runReadOnlyPhase<T>(
	a: Attempt,
	phase: ReadOnlyPhase<T>,
): Promise<{ value: T; provider: string }> {
	const { req, timeline } = a;
	const { config, step } = runInputs(a.run, req.stepIndex);
	const place = new PlanningWorkspace(a, req.workspace, config.repos, phase.purpose);
	const checkouts = place.checkouts();
	await place.prepare();
	await timeline.add(
		"plan.checked_out",
		`checked out ${checkouts.map((r) => r.name).join(", ")} read-only for ${phase.checkedOutFor}`,
	);
	const ctx: ChainContext = {
		...chainContext(a, config, deadlineOf(config, step)),
		scratchDir: place.scratch,
	};
	const tries: string[][] = [];
	let from = 0;
	for (let n = 1; n <= phase.tries; n++) {
		const prompt = phase.prompt(place, checkouts, n, tries.at(-1) ?? []);
		const done = await runChain(ctx, from, {
			turn: async () => {
				await place.clear(...phase.files);
				return { cwd: place.dir, prompt, probe: () => place.fingerprint() };
			},
			reset: () => place.restore(),
		});
		from = done.index;
		await stopAgent(a);
		await place.restore();
		const verdict = await phase.check(place);
		const provider = done.spec;
		if (verdict.ok) {
			const [type, message, data] = phase.accepted(verdict.value, n);
			await timeline.add(type, message, { ...data, provider });
			return { value: verdict.value, provider };
		}
		tries.push(verdict.problems);
		const [type, message, data] = phase.rejected(verdict.problems, n, n < phase.tries);
		await timeline.add(type, message, { ...data, provider });
	}
	throw new StepFailure(phase.failure(tries), false, "plan");
}
