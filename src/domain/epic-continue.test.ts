import { describe, expect, it } from "vitest";
import type { EpicTaskState, EpicTaskStatus } from "./epic";
import { continueEpic } from "./epic-continue";
import { newRun, type Run } from "./run";

const task = (id: string, status: EpicTaskStatus, runId?: string): EpicTaskState => ({
	id,
	title: `Task ${id}`,
	repo: "api",
	goal: "g",
	doneWhen: "d",
	dependsOn: [],
	file: `tasks/${id}-t.md`,
	body: "b",
	status,
	issue: { id: `sub-${id}`, key: `ENG-${id}` },
	...(runId ? { runId, prUrls: [`https://github.com/a/b/pull/${id}`] } : {}),
	...(status === "failed" || status === "blocked" ? { reason: "why" } : {}),
});

describe("continueEpic", () => {
	it("keeps done and reviewed tasks and the sub-issues; restarts failed, blocked and cut-off ones", () => {
		const previous: Run = {
			...newRun({
				runId: "01OLD",
				source: "linear",
				issueId: "e",
				trigger: "api",
				now: "2026-11-24T00:00:00.000Z",
			}),
			status: "cancelled",
			epic: {
				tasks: [
					task("01", "done", "r1"),
					task("02", "in_review", "r2"),
					task("03", "failed", "r3"),
					task("04", "blocked"),
					task("05", "running", "r5"),
				],
				comment: { claimed: true, id: "c1", text: "old" },
				lease: { id: "x", until: "2999-01-01T00:00:00.000Z" },
			},
		};
		const next = continueEpic(previous);
		expect(next.tasks.map((t) => [t.id, t.status, t.runId, t.issue?.key])).toEqual([
			["01", "done", "r1", "ENG-01"],
			["02", "in_review", "r2", "ENG-02"],
			["03", "waiting", undefined, "ENG-03"],
			["04", "waiting", undefined, "ENG-04"],
			["05", "waiting", undefined, "ENG-05"],
		]);
		expect(next.tasks[2]?.reason).toBeUndefined();
		expect(next).toMatchObject({ origin: "01OLD", continues: "01OLD", comment: { id: "c1" } });
		// The old run's lease and slot are its own.
		expect(next.lease).toBeUndefined();
		expect(next.released).toBeUndefined();
	});
});
