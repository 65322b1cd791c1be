import { describe, expect, it } from "vitest";
import type { StepFinished } from "../queue/messages";
import { cancelPatch, decideOnStepFinished } from "./progress";
import { newRun, newStep, type Run } from "./run";

const now = "2026-11-21T12:00:00.000Z";
function running(steps = 1, attempt = 1): Run {
	const run = newRun({ runId: "R1", source: "linear", issueId: "i", trigger: "webhook", now });
	return {
		...run,
		status: "running",
		steps: Array.from({ length: steps }, (_, i) => ({
			...newStep(i, `repo${i}`),
			...(i === 0 ? { status: "running" as const, attempt } : {}),
		})),
	};
}
const msg = (over: Partial<StepFinished> = {}): StepFinished => ({
	type: "step.finished",
	runId: "R1",
	stepIndex: 0,
	attempt: 1,
	outcome: "succeeded",
	prUrl: "https://github.com/a/b/pull/1",
	branch: "feat/x",
	...over,
});

describe("decideOnStepFinished", () => {
	it("finishes a one-step run on success", () => {
		const d = decideOnStepFinished(running(), msg(), now, 3);
		expect(d.kind).toBe("finish");
		expect(d.patch?.set?.status).toBe("succeeded");
		expect(d.patch?.steps?.[0]).toMatchObject({
			status: "succeeded",
			prUrl: "https://github.com/a/b/pull/1",
			branch: "feat/x",
		});
	});

	it("launches the next pending step", () => {
		const d = decideOnStepFinished(running(2), msg(), now, 3);
		expect(d).toMatchObject({ kind: "launch", stepIndex: 1 });
		expect(d.patch?.steps?.[1]?.status).toBe("launching");
		expect(d.patch?.set).toBeUndefined();
	});

	it("retries a transient failure with the next attempt, then fails at max_attempts", () => {
		const d = decideOnStepFinished(
			running(),
			msg({ outcome: "failed", transient: true, error: "429" }),
			now,
			3,
		);
		expect(d).toMatchObject({ kind: "retry", attempt: 2 });
		expect(d.patch?.steps?.[0]).toMatchObject({
			status: "launching",
			attempt: 2,
			taskId: undefined,
		});
		const last = decideOnStepFinished(
			running(1, 3),
			msg({ attempt: 3, outcome: "failed", transient: true, error: "429" }),
			now,
			3,
		);
		expect(last.kind).toBe("finish");
		expect(last.patch?.set).toMatchObject({ status: "failed", error: "429" });
	});

	it("fails the run on a permanent failure and cancels the remaining steps", () => {
		const d = decideOnStepFinished(
			running(3),
			msg({ outcome: "failed", error: "no commit" }),
			now,
			3,
		);
		expect(d.kind).toBe("finish");
		expect(d.patch?.set).toMatchObject({
			status: "failed",
			error: "step 1 (repo0) failed: no commit",
		});
		expect(d.patch?.steps?.[1]?.status).toBe("cancelled");
		expect(d.patch?.steps?.[2]?.status).toBe("cancelled");
	});

	it("ignores duplicates, stale attempts, unknown steps and finished runs", () => {
		expect(decideOnStepFinished(running(1, 2), msg({ attempt: 1 }), now, 3)).toMatchObject({
			kind: "ignore",
			reason: expect.stringMatching(/stale/),
		});
		const done = { ...running(), steps: [{ ...newStep(0, "r"), status: "succeeded" as const }] };
		expect(decideOnStepFinished(done, msg(), now, 3)).toMatchObject({
			kind: "ignore",
			reason: "step already succeeded",
		});
		expect(decideOnStepFinished(running(), msg({ stepIndex: 4 }), now, 3).kind).toBe("ignore");
		expect(decideOnStepFinished({ ...running(), status: "failed" }, msg(), now, 3)).toMatchObject({
			kind: "ignore",
			reason: "run already failed",
		});
	});

	it("cancels every unfinished step with the run", () => {
		const p = cancelPatch(running(2), now, "stop");
		expect(p.set).toMatchObject({ status: "cancelled", error: "stop" });
		expect(Object.keys(p.steps ?? {})).toEqual(["0", "1"]);
	});
});
