import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lisa } from "../support/cli";
import { createStackWorld, type StackWorld } from "../support/stack";

// `lisa run` as a real process: its own in-process stack, the same intake path, the original UX.

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld({ startStack: false });
});
afterAll(() => w.stop());

describe("lisa run", () => {
	it("--dry-run says what it would do and changes nothing", async () => {
		const issue = w.issue("Fix login redirect");
		const { code, out } = await lisa(["run", "--dry-run"], w.env);
		expect(code).toBe(0);
		expect(out.trim().split("\n")).toEqual([
			"[dry-run] Would fetch issue from linear (ENG/-)",
			"[dry-run] Workflow mode: worktree",
			"[dry-run] Models priority: claude",
			"[dry-run] Then implement, push, create PR, and update issue status",
			`[dry-run] Next issue: ${issue.identifier} "Fix login redirect"`,
		]);
		expect(w.linear.stateName(issue)).toBe("Todo");
		expect(w.linear.state.issueUpdates).toEqual([]);
	});

	it("refuses a --limit that is not a whole number and an --interval out of range, naming the value", async () => {
		for (const [flag, value, message] of [
			["--limit", "2x", '--limit must be a whole number ≥ 0 (got "2x")'],
			["--limit", "1.5", '--limit must be a whole number ≥ 0 (got "1.5")'],
			["--interval", "0", '--interval must be a number of seconds > 0 and ≤ 86400 (got "0")'],
		] as const) {
			const { code, stderr } = await lisa(["run", "--dry-run", flag, value], w.env);
			expect({ code, stderr }).toEqual({ code: 1, stderr: `${message}\n` });
		}
	});

	it("refuses to run without the tracker's credentials, naming them", async () => {
		const { LINEAR_API_KEY: _, ...env } = w.env;
		const { code, out } = await lisa(["run", "--once"], env);
		expect(code).toBe(1);
		expect(out).toContain("Missing environment variables: LINEAR_API_KEY");
	});

	it("--once recovers orphans, then resolves the next issue end to end and exits 0", async () => {
		const orphan = w.linear.addIssue({
			teamKey: "ENG",
			title: "Orphaned",
			state: "In Progress",
			labels: ["lisa"],
			priority: 4,
		});
		const next = w.linear.state.issues.find((i) => i.title === "Fix login redirect");
		if (!next) throw new Error("no issue");
		next.priority = 1;
		const { code, out } = await lisa(["run", "--once"], w.env);
		expect(out).toMatch(
			/Lisa is polling linear for label 'lisa' in "Todo"; runs at http:\/\/127\.0\.0\.1:\d+/,
		);
		expect(out).toContain(
			`Recovered ${orphan.identifier}: left in "In Progress" by a dead run, back to "Todo"`,
		);
		expect(out).toMatch(
			new RegExp(`Session 1: ${next.identifier} "Fix login redirect" → run \\w+`),
		);
		expect(code).toBe(0);
		expect(w.linear.stateName(next)).toBe("In Review");
		expect(w.linear.stateName(orphan)).toBe("Todo");
		expect(w.github.pulls("acme/api").map((p) => p.head.ref)).toEqual([
			`feat/${next.identifier.toLowerCase()}-fix-login-redirect`,
		]);
	});

	it("prints an issue's title without the escape codes its author put in it", async () => {
		const ESC = "\u001b";
		const issue = w.linear.addIssue({
			teamKey: "ENG",
			title: `Fix ${ESC}]0;pwned\u0007the ${ESC}[2Jbug`,
			state: "Todo",
			labels: ["lisa"],
			priority: 1,
		});
		const { code, out } = await lisa(["run", "--dry-run"], w.env);
		expect(code).toBe(0);
		expect(out).toContain(`[dry-run] Next issue: ${issue.identifier} "Fix the bug"`);
		expect(out).not.toContain(ESC);
	});
});
