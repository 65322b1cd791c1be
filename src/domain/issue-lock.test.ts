import { describe, expect, it } from "vitest";
import { FINALIZE_WINDOW_MS, holdsIssue } from "./issue-lock";
import { newRun, type Run } from "./run";

const at = "2026-11-21T12:00:00.000Z";
const run = (over: Partial<Run>): Run =>
	({
		...newRun({ runId: "R1", source: "linear", issueId: "i", trigger: "webhook", now: at }),
		...over,
	}) as Run;
const later = (ms: number) => new Date(Date.parse(at) + ms);

describe("holdsIssue", () => {
	it("holds while the run works, whatever its age", () => {
		expect(holdsIssue(run({ status: "queued" }), later(FINALIZE_WINDOW_MS * 2))).toBe(true);
		expect(holdsIssue(run({ status: "running" }), later(FINALIZE_WINDOW_MS * 2))).toBe(true);
	});

	it("holds a finished run until its tracker updates are done or given up", () => {
		const finishing = run({ status: "failed", finishedAt: at, tracker: { started: true } });
		expect(holdsIssue(finishing, later(60_000))).toBe(true);
		expect(holdsIssue(finishing, later(FINALIZE_WINDOW_MS - 1))).toBe(true);
		expect(holdsIssue(finishing, later(FINALIZE_WINDOW_MS))).toBe(false);
		expect(holdsIssue({ ...finishing, tracker: { done: true } }, later(1))).toBe(false);
	});

	it("does not hold for a run that does not exist", () => {
		expect(holdsIssue(undefined, later(0))).toBe(false);
	});
});
