import { planLines, runCostLine, runRepos } from "./comments";
import type { Plan } from "./plan";
import { prUrls, type Run, workSteps } from "./run";
import { stepNumber } from "./step-label";

// What Lisa says in an agent session while a run works and when it ends: the activities' contents,
// as the tracker port posts them. Pure.
// docs/trackers.md › Linear agent sessions (delegate an issue to Lisa)

/** An activity in a Linear agent session (https://linear.app/developers/agent-interaction). */
export type SessionActivity =
	| { type: "thought" | "elicitation" | "response" | "error"; body: string }
	| { type: "action"; action: string; parameter: string; result?: string };

const issueName = (run: Run) => run.issue?.key ?? run.issueKey ?? run.issueId;

/** The first activity, posted as soon as the run is accepted (Linear wants one within 10 s). */
export function acknowledgement(run: Run, runUrl: string): SessionActivity {
	return {
		type: "thought",
		body: `On it: reading ${issueName(run)} and preparing a workspace. Follow the run at ${runUrl}`,
	};
}

export function startedAction(run: Run): SessionActivity {
	const repos = runRepos(run);
	const where = repos.startsWith("planning") ? ` (${repos})` : ` in ${repos}`;
	return { type: "action", action: "Working on", parameter: `${issueName(run)}${where}` };
}

/** The accepted plan of a multi-repo run. */
export function planAction(plan: Plan): SessionActivity {
	return {
		type: "action",
		action: "Planned",
		// "api → web + docs": orders in sequence, equal orders side by side.
		parameter: [...new Set(plan.steps.map((s) => s.order))]
			.map((o) =>
				plan.steps
					.filter((s) => s.order === o)
					.map((s) => s.repo)
					.join(" + "),
			)
			.join(" → "),
		result: planLines(plan).join("\n"),
	};
}

export function stepAction(run: Run, stepIndex: number): SessionActivity {
	const step = run.steps[stepIndex];
	const work = workSteps(run);
	const position = stepNumber(run.steps, stepIndex);
	return {
		type: "action",
		action: "Opened pull request",
		parameter: step?.prUrl ?? `step ${position}`,
		result: `${step?.repo ?? "repo"}: step ${position} of ${work.length} done`,
	};
}

/** The session's last activity: the PR links, or what went wrong. */
export function finalActivity(run: Run, runUrl: string): SessionActivity {
	const prs = prUrls(run);
	const list = prs.map((u) => `- ${u}`).join("\n");
	const end = `${runCostLine(run)}\nRun: ${runUrl}`;
	if (run.status === "succeeded")
		return {
			type: "response",
			body: `${prs.length === 1 ? "Opened a pull request" : `Opened ${prs.length} pull requests`}:\n${list}\n\n${end}`,
		};
	if (run.status === "cancelled")
		return {
			type: "response",
			body: `Stopped: ${run.error ?? "the run was cancelled"}.${prs.length ? `\n\nPull requests opened before stopping:\n${list}` : ""}\n\n${end}`,
		};
	return {
		type: "error",
		body: `Could not resolve this issue: ${run.error ?? "the run failed"}${prs.length ? `\n\nPull requests opened before the failure:\n${list}` : ""}\n\n${end}`,
	};
}

/** The answer to a follow-up: recorded on the run, which does not change course mid-flight. */
export function promptReply(run: Run, runUrl: string, finished: boolean): SessionActivity {
	return finished
		? {
				type: "response",
				body: `This run has finished (${run.status}); your message is recorded on it (${runUrl}). Delegate the issue to Lisa again to start a new run.`,
			}
		: {
				type: "thought",
				body: `Noted: your message is recorded on the run (${runUrl}). The run keeps its course; stop the session and delegate again to start over with new instructions.`,
			};
}
