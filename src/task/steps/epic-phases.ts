import {
	EPIC_LIMITS,
	type EpicPlan,
	type EpicResearch,
	PLAN_FILE_MD,
	RESEARCH_FILE,
	TASK_FILE_NAME,
	TASKS_DIR,
} from "../../domain/epic";
import { checkPlan, checkResearch, type FileRead, type PlanFiles } from "../../domain/epic-files";
import { redact } from "../../domain/redact";
import type { Run } from "../../domain/run";
import { type Attempt, runInputs } from "../context/attempt";
import { buildEpicPlanPrompt, buildResearchPrompt } from "../prompts/epic-prompt";
import type { AgentFile, PlanningWorkspace } from "./planning-workspace";
import { type Entry, runReadOnlyPhase } from "./read-only-phase";

// An epic's research and plan phases (docs/epics.md › Epics), each one step: every repo checked out
// read-only, a fresh agent asked for the phase's files, the files checked, and the agent asked
// again with what is missing, up to three times.

const EPIC_TRIES = 3;

/** The phase's failure after its last try: what the last one still left missing. */
const incomplete = (name: string) => (tries: string[][]) =>
	`the ${name} phase was incomplete after ${EPIC_TRIES} attempts: ${(tries.at(-1) ?? []).join("; ")}`;

const rejected =
	(name: string) =>
	(missing: string[], n: number, again: boolean): Entry => [
		"epic.phase_incomplete",
		`the ${name} is incomplete (attempt ${n}): ${missing.join("; ")}${again ? "; asking the agent again with these problems" : ""}`,
		{ missing },
	];

/** The research phase: research.md, or the questions to ask when the issue cannot be planned. */
export async function executeResearch(
	a: Attempt,
): Promise<{ research: EpicResearch; provider: string }> {
	const { issue } = runInputs(a.run, a.req.stepIndex);
	const { value: research, provider } = await runReadOnlyPhase<EpicResearch>(a, {
		purpose: "research",
		checkedOutFor: "the epic's research",
		tries: EPIC_TRIES,
		files: [RESEARCH_FILE],
		prompt: (place, repos, attempt, missing) =>
			buildResearchPrompt({ issue, repos, file: place.file(RESEARCH_FILE), attempt, missing }),
		check: async (place) => {
			const file = await place.read(RESEARCH_FILE, EPIC_LIMITS.researchBytes);
			if ("error" in file) return { ok: false, problems: [file.error] };
			// The agent's words go to the run, the tracker and the next prompts: checked as they go.
			const verdict = checkResearch("text" in file ? redact(file.text, a.deps.secrets) : undefined);
			return verdict.ok ? verdict : { ok: false, problems: verdict.missing };
		},
		accepted: (r, n) => [
			"epic.research_checked",
			`${
				r.needsSpec
					? `the research needs a spec: ${r.needsSpec.length} question(s)`
					: `research.md accepted (${Buffer.byteLength(r.text)} bytes)`
			} (attempt ${n})`,
		],
		rejected: rejected("research"),
		failure: incomplete("research"),
	});
	return { research, provider };
}

/** The plan phase: plan.md and one file per task, over research.md (`research`: its text). */
export async function executeEpicPlan(
	a: Attempt,
	research: string,
): Promise<{ epicPlan: EpicPlan; provider: string }> {
	const { config, issue } = runInputs(a.run, a.req.stepIndex);
	const names = config.repos.map((r) => r.name);
	const maxTasks = Math.min(config.epic.max_tasks, EPIC_LIMITS.maxTasks);
	const { value: epicPlan, provider } = await runReadOnlyPhase<EpicPlan>(a, {
		purpose: "epic planning",
		checkedOutFor: "the epic's plan",
		tries: EPIC_TRIES,
		files: [PLAN_FILE_MD, TASKS_DIR],
		prompt: (place, repos, attempt, missing) =>
			buildEpicPlanPrompt({ issue, research, repos, dir: place.dir, maxTasks, attempt, missing }),
		check: async (place) => {
			const verdict = checkPlan(await readPlanFiles(place, a.deps.secrets), names, maxTasks);
			return verdict.ok ? verdict : { ok: false, problems: verdict.missing };
		},
		accepted: (plan, n) => [
			"epic.plan_checked",
			`plan accepted: ${plan.tasks
				.map(
					(t) => `${t.id} ${t.repo}${t.dependsOn.length ? ` after ${t.dependsOn.join(", ")}` : ""}`,
				)
				.join("; ")} (attempt ${n})`,
		],
		rejected: rejected("plan"),
		failure: incomplete("plan"),
	});
	return { epicPlan, provider };
}

/** The research the plan phase works from: the run's last research step's report. */
export function researchOf(run: Run): string | undefined {
	const step = [...run.steps].reverse().find((s) => s.kind === "research" && s.report?.research);
	return step?.report?.research?.text ?? run.epic?.research?.text;
}

/**
 * plan.md and the entries of tasks/, each read safely and redacted (the agent's words go to the
 * run, the tracker and the next prompts); what could not be read, with why.
 */
async function readPlanFiles(
	place: PlanningWorkspace,
	secrets: readonly string[],
): Promise<PlanFiles> {
	const clean = (read: AgentFile, absent?: string): FileRead | undefined => {
		if ("text" in read) return { text: redact(read.text, secrets) };
		if ("error" in read) return read;
		return absent === undefined ? undefined : { error: absent };
	};
	const plan = clean(await place.read(PLAN_FILE_MD, EPIC_LIMITS.planBytes));
	const entries = await place.list(TASKS_DIR, EPIC_LIMITS.taskEntries);
	if (entries && "error" in entries) return { plan, tasks: entries };
	const tasks: ({ file: string } & FileRead)[] = [];
	for (const name of entries ?? []) {
		const file = `${TASKS_DIR}/${name}`;
		// A name that is no task file's is named by the check, unread.
		const read = TASK_FILE_NAME.test(name)
			? clean(await place.read(file, EPIC_LIMITS.taskBytes), `${file} vanished while it was read`)
			: { text: "" };
		tasks.push({ file, ...(read as FileRead) });
	}
	return { plan, tasks };
}
