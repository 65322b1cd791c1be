import type { EventAnswer, RunAnswer, StatsAnswer, StepAnswer } from "../api/schemas";
import { changesLine, cleanTitle } from "../domain/changes";
import { costLine, usd } from "../domain/cost";
import { printable } from "../domain/printable";
import { oneLine } from "../domain/redact";
import { readsAllRepos } from "../domain/run";
import { RUN_STATUSES } from "../domain/states";
import { stepNumber } from "../domain/step-label";

// Pure text for `lisa runs`, `lisa status` and `lisa logs`: no I/O, no clock (callers pass `now`).

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string[] {
	const all = [header, ...rows];
	const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
	return all.map((r) =>
		r
			.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
			.join("  ")
			.trimEnd(),
	);
}

/** `42s`, `3m 05s`, `2h 04m`. */
export function duration(seconds: number): string {
	const s = Math.max(0, Math.round(seconds));
	if (s < 60) return `${s}s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
	return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

function runDuration(run: Pick<RunAnswer, "createdAt" | "finishedAt">, now: Date): string {
	const end = run.finishedAt ? Date.parse(run.finishedAt) : now.getTime();
	return duration((end - Date.parse(run.createdAt)) / 1000);
}

// An issue's title, an error, an event's message are partly others' text (the tracker's, an
// agent's output): printed on one line without their escape codes, which could take over a terminal.
export const shown = (text: string, max: number) => oneLine(printable(text), max);

const issueName = (run: Pick<RunAnswer, "issueKey" | "issueId">) => run.issueKey ?? run.issueId;
/** The steps that change a repository: not a plan's, not an epic's research or plan. */
const codeSteps = (run: RunAnswer) => run.steps.filter((s) => !readsAllRepos(s));
const unique = (xs: (string | undefined)[]) => [...new Set(xs.filter((x): x is string => !!x))];

export function runsTable(runs: RunAnswer[], now: Date): string[] {
	return table(
		["ID", "STATUS", "ISSUE", "REPOS", "PROVIDER", "DURATION", "PRS"],
		runs.map((r) => [
			r.id,
			r.status,
			issueName(r),
			unique(codeSteps(r).map((s) => s.repo)).join(",") || "-",
			unique(r.steps.map((s) => s.provider)).join(",") || "-",
			runDuration(r, now),
			r.prUrls.join(" ") || "-",
		]),
	);
}

/** "plan" (or "research"), "#1", "#2"…: the numbering every view uses (src/domain/step-label.js). */
function stepTag(steps: readonly StepAnswer[], index: number): string {
	const n = stepNumber(steps, index);
	return steps.find((s) => s.index === index)?.kind ? n : `#${n}`;
}

function stepLine(steps: readonly StepAnswer[], step: StepAnswer, repoWidth: number): string {
	const repo = step.kind ? "-" : step.repo;
	const where = step.prUrl ?? step.branch ?? "";
	const tagWidth = Math.max(...steps.map((s) => stepTag(steps, s.index).length));
	return [
		stepTag(steps, step.index).padEnd(tagWidth),
		repo.padEnd(repoWidth),
		step.status.padEnd(9),
		`attempt ${step.attempt}`,
		(step.agentState ?? "-").padEnd(13),
		(step.provider ?? "-").padEnd(8),
		// A step no attempt of which ended has cost nothing yet.
		(step.usage?.length ? usd(step.cost.totalUsd) : "-").padEnd(8),
		where,
		step.error ? `error: ${shown(step.error, 160)}` : "",
	]
		.join("  ")
		.trimEnd();
}

/** What a step's pull request changed, under its line: `3 files +120 −8 · "feat: add health check"`. */
function changeLine(step: StepAnswer): string | undefined {
	const parts = [
		step.changes ? changesLine(step.changes) : undefined,
		step.prTitle ? `"${oneLine(cleanTitle(step.prTitle), 100)}"` : undefined,
	].filter(Boolean);
	return parts.length ? parts.join(" · ") : undefined;
}

/** `10:00:01  step.launched #1  `: when, what and which step an event is. */
function eventHead(e: EventAnswer, steps: readonly StepAnswer[]): string {
	const step = e.step === undefined ? "" : ` ${stepTag(steps, e.step)}`;
	return `${e.at.slice(11, 19)}  ${e.type}${step}  `;
}

export function eventLine(e: EventAnswer, steps: readonly StepAnswer[] = []): string {
	return `${eventHead(e, steps)}${shown(e.message, 160)}`;
}

/** One event in full for `lisa logs`: its first line as eventLine's, the rest indented under it. */
export function logLines(e: EventAnswer, steps: readonly StepAnswer[]): string[] {
	const [first = "", ...rest] = printable(e.message).replace(/\s+$/, "").split("\n");
	return [`${eventHead(e, steps)}${first}`, ...rest.map((l) => `    ${l}`)];
}

/** The run's cost and limit; when it waits for approval, the request and how to answer it. */
function costLines(run: RunAnswer, apiUrl: string | undefined): string[] {
	const c = run.cost;
	const limit = run.limitUsd === null ? "" : `; limit ${usd(run.limitUsd)}`;
	const lines = [
		`  ${costLine(c)}  (model ${usd(c.modelUsd)}, compute ${usd(c.computeUsd)}${limit})`,
	];
	if (run.costWithFollowUps)
		lines.push(`  with its follow-up rounds: ${costLine(run.costWithFollowUps)}`);
	for (const a of run.approvals ?? [])
		lines.push(
			`  approved: limit ${usd(a.limitUsd)} at ${usd(a.spentUsd)} spent, by ${a.by} (${a.via}) ${a.at.slice(0, 19)}`,
		);
	const request = run.approval;
	if (run.status === "awaiting_approval" && request) {
		const url = `${apiUrl ?? ""}/api/runs/${run.id}/approve`;
		lines.push(
			`  awaiting approval since ${request.requestedAt.slice(0, 19)}: spent ${usd(request.spentUsd)} of ${usd(request.limitUsd)}; approving raises the limit to ${usd(request.proposedLimitUsd)} unless you give one`,
			`  approve: curl -X POST -H "Authorization: Bearer $LISA_API_TOKEN" ${url} [-d '{"limitUsd": ${request.proposedLimitUsd}}']`,
			`           or the dashboard (${run.links.dashboard}, admin token), or reply \`/lisa continue\` on its pull request or Linear session`,
		);
	}
	return lines;
}

/**
 * An epic run's phase, its questions when it needs a spec, and a line per task
 * (docs/epics.md › Epics); a task's run, its epic. Titles, reasons and questions are others' text:
 * one line each, printable.
 */
export function epicLines(run: Pick<RunAnswer, "epic" | "epicTask">): string[] {
	if (run.epicTask) return [`  epic:  task ${run.epicTask.taskId} of run ${run.epicTask.runId}`];
	const epic = run.epic;
	if (!epic) return [];
	const lines = [`  epic:  ${epic.phase}, ${epic.done} of ${epic.total} tasks done`];
	if (epic.continues) lines.push(`  continues: run ${epic.continues}`);
	if (epic.questions?.length)
		lines.push("  questions:", ...epic.questions.map((q) => `    - ${shown(q, 300)}`));
	if (!epic.tasks.length) return lines;
	const rows = epic.tasks.map((t) => [
		t.id,
		shown(t.title, 60),
		t.repo,
		t.dependsOn.join(",") || "-",
		t.status,
		t.issue?.key ?? "-",
		[...(t.prUrls ?? []), ...(t.reason ? [`(${shown(t.reason, 160)})`] : [])].join(" ") || "-",
	]);
	const header = ["ID", "TITLE", "REPO", "AFTER", "STATUS", "ISSUE", "PRS"];
	return [...lines, "  tasks:", ...table(header, rows).map((l) => `    ${l}`)];
}

/** One run: header, a line per step, and the last `recent` timeline messages (times in UTC). */
export function runDetail(
	run: RunAnswer,
	events: EventAnswer[],
	{
		recent = 5,
		apiUrl,
	}: { recent?: number /** Lisa's URL, for the approve command. */; apiUrl?: string } = {},
): string[] {
	const title = run.title ? ` "${shown(run.title, 200)}"` : "";
	// No clock here: a watched run's header changes only when the run does.
	const when = run.finishedAt
		? `took ${runDuration(run, new Date(run.finishedAt))}`
		: `since ${run.createdAt.slice(11, 19)}`;
	const lines = [
		`run ${run.id}  ${run.status}  ${run.source} ${issueName(run)}${title}  (${run.trigger}, ${when})`,
	];
	if (run.url) lines.push(`  issue: ${run.url}`);
	if (run.error) lines.push(`  error: ${shown(run.error, 300)}`);
	lines.push(...costLines(run, apiUrl));
	if (run.prUrls.length) lines.push(`  PRs:   ${run.prUrls.join(" ")}`);
	if (run.parentRunId) lines.push(`  round: ${run.round?.number ?? "?"} of run ${run.parentRunId}`);
	lines.push(...epicLines(run));
	if (run.followUps.length)
		lines.push(
			"  rounds:",
			...run.followUps.map(
				(f, i) => `    ${i + 1}. ${f.runId}  ${f.trigger}  ${f.status ?? ""}  ${f.at.slice(0, 19)}`,
			),
		);
	for (const p of run.pendingFollowUps)
		lines.push(`  next round: ${p.trigger} at ${p.dueAt.slice(11, 19)} on ${p.prUrl}`);
	if (run.followUpsStopped)
		lines.push(`  CI rounds stopped: ${shown(run.followUpsStopped.reason, 300)}`);
	if (run.steps.length) {
		const width = Math.max(...run.steps.map((s) => (s.kind ? 1 : s.repo.length)));
		lines.push("  steps:");
		for (const s of run.steps) {
			lines.push(`    ${stepLine(run.steps, s, width)}`);
			const changed = changeLine(s);
			if (changed) lines.push(`        ${changed}`);
		}
	} else lines.push("  steps: none yet");
	const tail = events.slice(-recent);
	if (tail.length) lines.push("  timeline:", ...tail.map((e) => `    ${eventLine(e, run.steps)}`));
	return lines;
}

/** "cost: $41.20 · $1.84 a succeeded run · $2.10 a merged PR"; a floor when some is unknown. */
export function spendLine(
	stats: Pick<StatsAnswer, "cost" | "costPerSucceededRun" | "costPerMergedPr">,
): string {
	const { cost } = stats;
	const unknown = `${cost.unknownRuns} run${cost.unknownRuns === 1 ? "" : "s"} of unknown cost`;
	const total =
		cost.totalUsd !== null
			? usd(cost.totalUsd)
			: cost.knownUsd
				? `at least ${usd(cost.knownUsd)} (${unknown})`
				: `unknown (${unknown})`;
	const per = (v: number | null, what: string) => (v === null ? [] : [`${usd(v)} a ${what}`]);
	return [
		`cost: ${total}`,
		...per(stats.costPerSucceededRun, "succeeded run"),
		...per(stats.costPerMergedPr, "merged PR"),
	].join(" · ");
}

/** `lisa status` without a run: counts, success rate, cost and the active runs. */
export function overview(
	stats: Pick<
		StatsAnswer,
		"counts" | "total" | "successRate" | "cost" | "costPerSucceededRun" | "costPerMergedPr"
	>,
	active: RunAnswer[],
	now: Date,
): string[] {
	const counts = RUN_STATUSES.map((s) => `${s} ${stats.counts[s] ?? 0}`).join(" · ");
	const rate =
		stats.successRate === null ? "no finished runs" : `${Math.round(stats.successRate * 100)}%`;
	const lines = [`runs: ${stats.total} (${counts})`, `success rate: ${rate}`, spendLine(stats)];
	if (!active.length) return [...lines, "no active runs"];
	return [...lines, "active runs:", ...runsTable(active, now).map((l) => `  ${l}`)];
}

/** The lines of `next` that `prev` did not show: what a non-terminal `--watch` prints. */
export function changedLines(prev: string[], next: string[]): string[] {
	const seen = new Set(prev);
	return next.filter((l) => !seen.has(l));
}

/**
 * A terminal frame that replaces the previous one (`previousLines` tall): cursor up, clear to the
 * end, the new lines clipped to the terminal's width so each takes one row.
 */
export function redraw(previousLines: number, lines: string[], columns: number): string {
	const clip = (l: string) => (l.length > columns ? `${l.slice(0, Math.max(columns - 1, 1))}…` : l);
	const up = previousLines ? `\x1b[${previousLines}F\x1b[J` : "";
	return `${up}${lines.map(clip).join("\n")}\n`;
}
