import { describe, expect, it } from "vitest";
import { parseConfig } from "../config/schema";
import {
	admit,
	boundRoundInput,
	type CiFailure,
	emptyFollowUps,
	type FollowUpEvent,
	type FollowUpSettings,
	type FollowUpState,
	failureSignature,
	firstErrorLines,
	followUpSettings,
	MAX_REPLIES,
	MAX_ROUND_INPUT_BYTES,
	mayDrive,
} from "./follow-up";

/** The defaults, spelled out: the test of the defaults compares with these. */
const SETTINGS: FollowUpSettings = {
	ci: true,
	reviews: true,
	mentions: true,
	review_comments: true,
	max_rounds: 3,
	debounce_seconds: 60,
	allow: [],
};
const PR = "https://github.com/acme/api/pull/7";
const SHA_A = "a".repeat(40);
const SHA_B = "b".repeat(40);
const NOW = new Date("2026-11-24T10:00:00.000Z");
let ids = 0;
const newId = () => `01ROUND${++ids}`;

const ci = (sha = SHA_A): FollowUpEvent => ({ trigger: "ci_failure", prUrl: PR, headSha: sha });
const review = (id: number, association = "COLLABORATOR"): FollowUpEvent => ({
	trigger: "review",
	prUrl: PR,
	reviewId: id,
	author: "rev",
	association,
});
const mention = (id: string, association = "MEMBER", author = "dev"): FollowUpEvent => ({
	trigger: "mention",
	prUrl: PR,
	author,
	association,
	instruction: { id, author, body: "@lisa also handle the empty case", via: "comment" },
});

/** Admits every event in turn, as the handler does, and returns the last admission and the state. */
function admitAll(events: FollowUpEvent[], state: FollowUpState = emptyFollowUps(), s = SETTINGS) {
	let last = admit(state, events[0] as FollowUpEvent, s, NOW, newId);
	for (const event of events.slice(1)) {
		if (last.kind === "add") state = last.state;
		last = admit(state, event, s, NOW, newId);
	}
	if (last.kind === "add") state = last.state;
	return { last, state };
}

describe("admit: what makes a round", () => {
	it("starts a pending round for the first event, due after the debounce", () => {
		const got = admit(emptyFollowUps(), ci(), SETTINGS, NOW, newId);
		expect(got.kind).toBe("add");
		if (got.kind !== "add") return;
		expect(got.schedule).toBe(true);
		expect(got.state.pending?.[0]).toMatchObject({
			trigger: "ci_failure",
			headSha: SHA_A,
			dueAt: "2026-11-24T10:01:00.000Z",
		});
	});

	it("makes one round of two failing checks of one commit (the second is already part of it)", () => {
		const { last, state } = admitAll([ci(), ci()]);
		expect(last).toMatchObject({ kind: "ignore", joined: true });
		expect(state.pending?.[0]?.headSha).toBe(SHA_A);
	});

	it("moves the pending round to a newer failing commit, with a fresh quiet period", () => {
		const first = admit(emptyFollowUps(), ci(SHA_A), SETTINGS, NOW, newId);
		if (first.kind !== "add") throw new Error("not added");
		const later = new Date(NOW.getTime() + 30_000);
		const second = admit(first.state, ci(SHA_B), SETTINGS, later, newId);
		expect(second).toMatchObject({ kind: "add", schedule: false });
		if (second.kind !== "add") return;
		expect(second.state.pending?.[0]).toMatchObject({
			runId: first.state.pending?.[0]?.runId,
			headSha: SHA_B,
			dueAt: "2026-11-24T10:01:30.000Z",
		});
	});

	it("gathers a reviewer's reviews and mentions into the one pending round", () => {
		const { state } = admitAll([review(1), review(2), mention("c1"), review(2)]);
		expect(state.pending?.[0]).toMatchObject({
			trigger: "review",
			reviewIds: [1, 2],
			instructions: [{ id: "c1" }],
		});
	});

	it("never gives a commit that had a round a second one", () => {
		const state: FollowUpState = {
			rounds: [
				{ runId: "01R1", trigger: "ci_failure", prUrl: PR, headSha: SHA_A, at: NOW.toISOString() },
			],
		};
		expect(admit(state, ci(SHA_A), SETTINGS, NOW, newId)).toMatchObject({ kind: "ignore" });
		expect(admit(state, ci(SHA_B), SETTINGS, NOW, newId)).toMatchObject({ kind: "add" });
	});

	it("refuses people without write access, with the reason", () => {
		for (const association of [
			"NONE",
			"CONTRIBUTOR",
			"FIRST_TIME_CONTRIBUTOR",
			"FIRST_TIMER",
			"",
		]) {
			const got = admit(
				emptyFollowUps(),
				mention("c", association, "outsider"),
				SETTINGS,
				NOW,
				newId,
			);
			expect(got.kind).toBe("ignore");
			if (got.kind === "ignore") expect(got.reason).toMatch(/outsider .* may not drive Lisa/);
		}
		expect(admit(emptyFollowUps(), review(3, "NONE"), SETTINGS, NOW, newId).kind).toBe("ignore");
	});

	it("lets a login in follow_up.allow drive Lisa whatever its association", () => {
		const allow = { ...SETTINGS, allow: ["Outsider"] };
		expect(admit(emptyFollowUps(), mention("c", "NONE", "outsider"), allow, NOW, newId).kind).toBe(
			"add",
		);
	});

	it("honours each switch of follow_up", () => {
		expect(admit(emptyFollowUps(), ci(), { ...SETTINGS, ci: false }, NOW, newId)).toMatchObject({
			kind: "ignore",
			reason: "follow_up.ci is off for this repository",
		});
		expect(
			admit(emptyFollowUps(), review(1), { ...SETTINGS, reviews: false }, NOW, newId).kind,
		).toBe("ignore");
		expect(
			admit(emptyFollowUps(), mention("c"), { ...SETTINGS, mentions: false }, NOW, newId).kind,
		).toBe("ignore");
	});

	it("stops at max_rounds and says so once", () => {
		const rounds = [1, 2, 3].map((n) => ({
			runId: `01R${n}`,
			trigger: "mention" as const,
			prUrl: PR,
			at: NOW.toISOString(),
		}));
		expect(admit({ rounds }, mention("c9"), SETTINGS, NOW, newId)).toMatchObject({
			kind: "limit",
			say: true,
		});
		expect(admit({ rounds, limitSaid: true }, mention("c9"), SETTINGS, NOW, newId)).toMatchObject({
			kind: "limit",
			say: false,
		});
		expect(admit({ rounds: [] }, ci(), { ...SETTINGS, max_rounds: 0 }, NOW, newId).kind).toBe(
			"limit",
		);
	});

	it("after the no-progress guard, CI no longer starts rounds; a person still can", () => {
		const state: FollowUpState = {
			rounds: [],
			stopped: { reason: "same failure", at: NOW.toISOString() },
		};
		expect(admit(state, ci(SHA_B), SETTINGS, NOW, newId)).toMatchObject({ kind: "ignore" });
		expect(admit(state, mention("c"), SETTINGS, NOW, newId).kind).toBe("add");
	});
});

describe("admit: several pull requests, and events after their round", () => {
	const PR_B = "https://github.com/acme/web/pull/9";

	it("gathers one round per pull request: an event on another PR never joins this one", () => {
		const { state } = admitAll([
			mention("c1"),
			{ ...review(5), prUrl: PR_B },
			{ ...ci(SHA_B), prUrl: PR_B },
		]);
		expect(state.pending?.map((p) => [p.prUrl, p.trigger, p.reviewIds, p.headSha])).toEqual([
			[PR, "mention", [], undefined],
			[PR_B, "review", [5], SHA_B],
		]);
	});

	it("counts rounds being gathered against max_rounds", () => {
		const { last } = admitAll(
			[mention("c1"), { ...mention("c2"), prUrl: PR_B }],
			emptyFollowUps(),
			{
				...SETTINGS,
				max_rounds: 1,
			},
		);
		expect(last.kind).toBe("limit");
	});

	it("never answers a review, an instruction or a failing commit twice, whatever the round's trigger", () => {
		const state: FollowUpState = {
			rounds: [
				{
					runId: "01R1",
					trigger: "review",
					prUrl: PR,
					headSha: SHA_A,
					reviewIds: [7],
					instructionIds: ["c1"],
					at: NOW.toISOString(),
				},
			],
		};
		for (const event of [review(7), mention("c1"), ci(SHA_A)])
			expect(admit(state, event, SETTINGS, NOW, newId)).toMatchObject({
				kind: "ignore",
				reason: "already answered by round 01R1",
			});
		expect(admit(state, review(8), SETTINGS, NOW, newId).kind).toBe("add");
	});

	it("keeps a round's input within its byte budget: logs go first, then annotations, then hunks", () => {
		const big = "x".repeat(3000);
		const input = boundRoundInput({
			number: 1,
			prUrl: PR,
			repo: "api",
			branch: "b",
			failures: Array.from({ length: 10 }, (_, i) => ({
				name: `check-${i}`,
				conclusion: "failure",
				annotations: Array.from({ length: 20 }, () => ({ message: big.slice(0, 1000) })),
				log: big,
			})),
			comments: Array.from({ length: 80 }, (_, i) => ({ id: i + 1, body: "fix", diffHunk: big })),
		});
		expect(JSON.stringify(input).length).toBeLessThanOrEqual(MAX_ROUND_INPUT_BYTES);
		expect(input.comments).toHaveLength(MAX_REPLIES);
		expect(input.failures?.every((f) => f.log === undefined)).toBe(true);
		expect(input.failures?.map((f) => f.name)).toHaveLength(10);
	});
});

describe("mayDrive", () => {
	it("trusts CI and Linear session members, and owners, members, collaborators on GitHub", () => {
		expect(mayDrive({ trigger: "ci_failure" }, SETTINGS)).toBe(true);
		expect(mayDrive({ trigger: "session_prompt", author: "anyone" }, SETTINGS)).toBe(true);
		for (const association of ["OWNER", "MEMBER", "COLLABORATOR"])
			expect(mayDrive({ trigger: "mention", author: "x", association }, SETTINGS)).toBe(true);
		expect(mayDrive({ trigger: "mention", author: "x" }, SETTINGS)).toBe(false);
	});
});

describe("the no-progress guard's signature", () => {
	const failure = (over: Partial<CiFailure> = {}): CiFailure => ({
		name: "test",
		conclusion: "failure",
		annotations: [],
		...over,
	});

	it("is the same for the same failure at another time, commit and duration", () => {
		const a = failure({
			log: "2026-11-24T10:00:01.123Z Running tests\n2026-11-24T10:00:02.000Z FAIL src/a.test.ts > empty (12ms)\nError: expected 1 to be 2 at abcdef1234",
		});
		const b = failure({
			log: "2026-11-25T08:13:44.900Z Running tests\n2026-11-25T08:13:45.500Z FAIL src/a.test.ts > empty (31ms)\nError: expected 1 to be 2 at 99aa00ff77",
		});
		expect(failureSignature([a])).toBe(failureSignature([b]));
	});

	it("differs when another check fails or the error changes", () => {
		const a = failure({ annotations: [{ message: "expected 1 to be 2" }] });
		expect(failureSignature([a])).not.toBe(
			failureSignature([failure({ annotations: [{ message: "expected 3 to be 2" }] })]),
		);
		expect(failureSignature([a])).not.toBe(failureSignature([a, failure({ name: "lint" })]));
	});

	it("does not depend on the order the checks came in", () => {
		const lint = failure({ name: "lint", summary: "2 errors" });
		const test = failure({ name: "test", summary: "1 failed" });
		expect(failureSignature([lint, test])).toBe(failureSignature([test, lint]));
	});

	it("takes annotations first, then the log's error lines, then the summary", () => {
		expect(
			firstErrorLines(failure({ annotations: [{ message: "boom" }], log: "Error: other" })),
		).toEqual(["boom"]);
		expect(firstErrorLines(failure({ log: "ok\nError: x\nfine" }))).toEqual(["Error: x"]);
		expect(firstErrorLines(failure({ summary: "Tests failed" }))).toEqual(["Tests failed"]);
	});
});

describe("follow_up settings", () => {
	const yaml = (extra: Record<string, unknown> = {}, repo: Record<string, unknown> = {}) =>
		parseConfig({ repos: [{ name: "api", url: "file:///tmp/api", ...repo }], ...extra });

	it("defaults to ci, reviews and mentions on, three rounds", () => {
		expect(followUpSettings(yaml(), "api")).toEqual(SETTINGS);
	});

	it("lets a repository override single fields of the top level", () => {
		const config = yaml({ follow_up: { max_rounds: 5, ci: false } }, { follow_up: { ci: true } });
		expect(followUpSettings(config, "api")).toMatchObject({
			ci: true,
			max_rounds: 5,
			reviews: true,
		});
	});

	it("refuses values SQS or the rules cannot honour", () => {
		expect(() => yaml({ follow_up: { debounce_seconds: 901 } })).toThrow(
			/follow_up.debounce_seconds/,
		);
		expect(() => yaml({ follow_up: { max_rounds: -1 } })).toThrow(/follow_up.max_rounds/);
	});
});
