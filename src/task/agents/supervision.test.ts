import { describe, expect, it } from "vitest";
import type { AgentState } from "../../domain/states";
import {
	type AgentObservation,
	classifyAgent,
	looksLikeInputPrompt,
	shouldKill,
	stepDeadline,
} from "./supervision";

const STALE = 240_000;
const base: AgentObservation = {
	running: true,
	exitCode: null,
	killed: false,
	active: false,
	silentMs: 0,
	tail: "",
	staleMs: STALE,
};

describe("agent classifier (docs/agent-task.md › Supervision)", () => {
	const cases: [string, Partial<AgentObservation>, AgentState][] = [
		["exited 0", { running: false, exitCode: 0, active: true }, "completed"],
		["exited 0 without any output", { running: false, exitCode: 0 }, "completed"],
		["exited non-zero", { running: false, exitCode: 3, active: true }, "crashed"],
		["killed by a signal", { running: false, exitCode: null }, "crashed"],
		["exited 0 after Lisa killed it", { running: false, exitCode: 0, killed: true }, "crashed"],
		["running, nothing yet", { silentMs: 5_000 }, "just_started"],
		["running, output just now", { active: true, silentMs: 500 }, "in_progress"],
		[
			"running, quiet for a while but not stale",
			{ active: true, silentMs: 200_000 },
			"in_progress",
		],
		["silent since the start for stale_output_seconds", { silentMs: STALE }, "stuck"],
		[
			"silent after output for stale_output_seconds",
			{ active: true, silentMs: STALE + 1 },
			"stuck",
		],
		[
			"a quiet claude prompt",
			{ active: true, silentMs: 15_000, tail: "done.\n>\n" },
			"waiting_input",
		],
		[
			"a prompt that just appeared",
			{ active: true, silentMs: 2_000, tail: "done.\n>" },
			"in_progress",
		],
		[
			"git asking for a password",
			{ active: true, silentMs: 30_000, tail: "Password for 'https://x@github.com':" },
			"waiting_input",
		],
		[
			"a stale prompt is stuck: nobody can answer",
			{ active: true, silentMs: STALE, tail: ">" },
			"stuck",
		],
		[
			"a `>` at the end of a busy line is not a prompt",
			{ active: true, silentMs: 30_000, tail: "Running tests -> src/a.ts >" },
			"in_progress",
		],
	];
	it.each(cases)("%s → %s", (_name, over, want) => {
		expect(classifyAgent({ ...base, ...over })).toBe(want);
	});

	it("recognises input prompts on the last line only, and never a busy line", () => {
		expect(looksLikeInputPrompt("some output\n›  ")).toBe(true);
		expect(looksLikeInputPrompt("❯ 1m 12:03:44")).toBe(true);
		expect(looksLikeInputPrompt("Overwrite file? (y/n)")).toBe(true);
		expect(looksLikeInputPrompt("Press Enter to continue")).toBe(true);
		expect(looksLikeInputPrompt("Username for 'https://github.com':")).toBe(true);
		expect(looksLikeInputPrompt(">\nstill working on it")).toBe(false);
		expect(looksLikeInputPrompt("Installing packages (y/n)")).toBe(false);
		expect(looksLikeInputPrompt("if (a > b) return")).toBe(false);
		expect(looksLikeInputPrompt("")).toBe(false);
	});

	it("kills only a stuck agent", () => {
		expect(
			(
				["just_started", "in_progress", "waiting_input", "stuck", "crashed", "completed"] as const
			).filter(shouldKill),
		).toEqual(["stuck"]);
	});
});

describe("step deadline", () => {
	const now = Date.parse("2026-03-01T12:00:00Z");
	it("counts from the launch and ends early enough to report before the sweeper", () => {
		expect(stepDeadline("2026-03-01T11:50:00Z", 60, now)).toBe(Date.parse("2026-03-01T12:49:30Z"));
		expect(stepDeadline(undefined, 1, now)).toBe(now + 54_000);
		// A launch time in the future (clock skew) counts from now.
		expect(stepDeadline("2026-03-01T13:00:00Z", 60, now)).toBe(now + 3_570_000);
	});
});
