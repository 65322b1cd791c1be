import { runCostLine, runMarker } from "./comments";
import { type CiFailure, firstErrorLines, type RoundInput, triggerLabel } from "./follow-up";
import { oneLine } from "./redact";
import type { Run } from "./run";

// What Lisa says about follow-up rounds (docs/follow-ups.md › Follow-ups): one comment on the pull
// request per round, one line on the issue. Each carries Lisa's marker, so Lisa never answers its
// own words.

/**
 * The agent's and CI's words as Lisa posts them: an `@name` in them pings nobody (a zero-width
 * space after the `@`), so a hostile agent or test output cannot summon people through Lisa.
 */
export const defuseMentions = (text: string) => text.replace(/@(?=[A-Za-z0-9])/g, "@\u200b");

const roundName = (round: RoundInput, run: Pick<Run, "trigger">) =>
	`round ${round.number} (${triggerLabel(run.trigger as Parameters<typeof triggerLabel>[0])})`;

/** The round's report on its step: what its agent said, and whether it changed anything. */
export const roundReportOf = (run: Run) => run.steps.find((s) => s.report?.round)?.report?.round;

/** What the round did, in a few words: the issue's line and the PR comment's first line. */
function outcome(run: Run): string {
	if (run.status === "succeeded")
		return roundReportOf(run)?.noChange ? "found nothing to change" : "pushed new commits";
	if (run.status === "cancelled") return `was cancelled: ${run.error ?? "stopped"}`;
	return `failed: ${run.error ?? "unknown error"}`;
}

/** The one comment a round leaves on its pull request. */
export function roundPrComment(run: Run, runUrl: string): string | undefined {
	const round = run.round;
	if (!round) return undefined;
	const summary = defuseMentions(roundReportOf(run)?.summary?.trim() ?? "");
	return [
		`**Lisa, ${roundName(round, run)}:** ${outcome(run)}.`,
		...(summary && run.status === "succeeded" ? ["", summary] : []),
		"",
		runCostLine(run),
		`Run: ${runUrl}`,
		runMarker(run.runId),
	].join("\n");
}

/** The one line a round adds to the issue (or its Linear session). */
export function roundIssueLine(run: Run, runUrl: string): string | undefined {
	const round = run.round;
	if (!round) return undefined;
	return `Lisa ${roundName(round, run)} on ${round.prUrl} ${oneLine(outcome(run), 300)}. Run: ${runUrl} (${runCostLine(run)})\n${runMarker(run.runId)}`;
}

/** The round limit, said once on the pull request and the issue. */
export function limitComment(parent: Run, reason: string, runUrl: string): string {
	return [
		`Lisa stops following up on this pull request: ${reason}. A person takes it from here; raise \`follow_up.max_rounds\` to allow more rounds.`,
		"",
		`Run: ${runUrl}`,
		runMarker(parent.runId),
	].join("\n");
}

/** The no-progress guard: the same checks failed the same way after the last round's fix. */
export function guardComment(parent: Run, failures: readonly CiFailure[], runUrl: string): string {
	const lines = failures.map(
		(f) =>
			`- ${defuseMentions(`${f.name} (${f.conclusion}): ${oneLine(firstErrorLines(f).join(" | ") || "no error text", 300)}`)}`,
	);
	return [
		"Lisa could not fix the failing checks: they fail the same way after its last round, so it stops here instead of repeating the attempt.",
		"",
		...lines,
		"",
		`Run: ${runUrl}`,
		runMarker(parent.runId),
	].join("\n");
}
