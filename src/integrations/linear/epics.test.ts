import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LinearDouble, startLinearDouble } from "../../../test/doubles/linear/server";
import { LinearTracker } from "./client";

let linear: LinearDouble;
let tracker: LinearTracker;

beforeAll(async () => {
	linear = await startLinearDouble();
	linear.addTeam({ key: "ENG", name: "Engineering" });
	tracker = LinearTracker.fromEnv(linear.apiKey, linear.url);
});
afterAll(() => linear.stop());

const marker = (run: string, task: string) => `<!-- lisa-epic ${run} task ${task} -->`;
const epicIssue = (title = "Epic") =>
	linear.addIssue({ teamKey: "ENG", title, state: "Todo", labels: ["lisa-epic"] });
const sub = (title: string, m: string, state = "Todo") => ({
	title,
	body: `Do ${title}.\n\n${m}`,
	marker: m,
	state,
});

describe("Linear epics (against the GraphQL double)", () => {
	it("creates sub-issues under the epic in the named state, relates them once, and finds each by its marker", async () => {
		const epic = epicIssue();
		const first = await tracker.epics.createSubIssue(
			epic.identifier,
			sub("Model", marker("R1", "01")),
		);
		const second = await tracker.epics.createSubIssue(
			epic.id,
			sub("API", marker("R1", "02"), "backlog"),
		);

		const a = linear.issue(first.id);
		const b = linear.issue(second.id);
		expect(first).toEqual({ id: a.id, key: a.identifier, url: a.url });
		expect(a).toMatchObject({
			parentId: epic.id,
			title: "Model",
			description: `Do Model.\n\n${marker("R1", "01")}`,
		});
		expect(b.parentId).toBe(epic.id);
		expect(linear.stateName(a)).toBe("Todo");
		expect(linear.stateName(b)).toBe("Backlog");

		await tracker.epics.addBlocker(second.id, first.id);
		await tracker.epics.addBlocker(second.id, first.id);
		const blocks = linear.state.relations.filter((r) => r.issueId === a.id);
		expect(blocks).toMatchObject([{ type: "blocks", relatedIssueId: b.id }]);

		expect(await tracker.epics.findSubIssue(epic.id, marker("R1", "02"))).toEqual(second);
		expect(await tracker.epics.findSubIssue(epic.identifier, marker("R1", "03"))).toBeUndefined();
	});

	it("matches a marker only in the body of the epic's own sub-issues", async () => {
		const epic = epicIssue();
		const other = epicIssue("Another epic");
		const wanted = marker("R2", "01");
		// Another epic's sub-issue with the same marker, a child naming it in its title only, and a
		// child carrying another run's marker (the same task number).
		const stray = linear.addIssue({ teamKey: "ENG", title: "Stray", description: wanted });
		stray.parentId = other.id;
		const titled = linear.addIssue({
			teamKey: "ENG",
			title: wanted,
			description: "no marker here",
		});
		titled.parentId = epic.id;
		const otherRun = linear.addIssue({
			teamKey: "ENG",
			title: "Old",
			description: marker("R20", "01"),
		});
		otherRun.parentId = epic.id;
		expect(await tracker.epics.findSubIssue(epic.id, wanted)).toBeUndefined();

		const made = await tracker.epics.createSubIssue(epic.id, sub("Real", wanted));
		expect(await tracker.epics.findSubIssue(epic.id, wanted)).toEqual(made);
		// A marker that is not one whole HTML comment would match too much: it is refused.
		for (const bad of ["", "<!--  -->", "lisa-epic R2", "<!-- a --> <!-- b -->"]) {
			const err = await tracker.epics.findSubIssue(epic.id, bad).catch((e) => e);
			expect(err).toMatchObject({ name: "TrackerError", transient: false });
			expect(err.message).toMatch(/marker must be one non-empty HTML comment/);
		}
		// A sub-issue whose body lacks its marker could never be found again: it is not created.
		const before = linear.state.issues.length;
		const lost = await tracker.epics
			.createSubIssue(epic.id, { ...sub("Lost", marker("R2", "02")), body: "no marker" })
			.catch((e) => e);
		expect(lost).toMatchObject({ name: "TrackerError", transient: false });
		expect(lost.message).toMatch(/does not carry its marker/);
		expect(linear.state.issues).toHaveLength(before);
	});

	it("refuses a state the epic's team does not have, naming the ones it has", async () => {
		const epic = epicIssue();
		const err = await tracker.epics
			.createSubIssue(epic.id, sub("X", marker("R3", "01"), "Ready"))
			.catch((e) => e);
		expect(err).toMatchObject({ name: "TrackerError", transient: false });
		expect(err.message).toMatch(
			/workflow state "Ready" not found .*available: Backlog, Todo, In Progress/,
		);
		expect(linear.state.issues.filter((i) => i.parentId === epic.id)).toEqual([]);
	});

	it("posts a comment, edits it in place, and says when the comment is gone", async () => {
		const epic = epicIssue();
		const id = await tracker.comment(epic.id, "Planning…");
		await tracker.epics.editComment(epic.id, id, "2 of 3 tasks done");
		const comment = linear.state.comments.find((c) => c.id === id);
		expect(comment).toMatchObject({ issueId: epic.id, body: "2 of 3 tasks done" });
		expect(comment?.editedAt).toBeTruthy();
		const err = await tracker.epics.editComment(epic.id, "no-such-comment", "x").catch((e) => e);
		expect(err).toMatchObject({ name: "TrackerError", transient: false });
	});

	it("adds a label, creating it in the team when missing, and only once", async () => {
		const epic = epicIssue();
		await tracker.epics.addLabel(epic.id, "needs-spec");
		await tracker.epics.addLabel(epic.identifier, "Needs-Spec");
		expect(linear.labelNames(epic)).toEqual(["lisa-epic", "needs-spec"]);
		const made = linear.state.labels.filter((l) => l.name === "needs-spec");
		expect(made).toMatchObject([{ teamId: epic.teamId }]);
		// A workspace label of that name is used rather than a second one created.
		const shared = linear.addLabel(null, "blocked-on-spec");
		const next = epicIssue();
		await tracker.epics.addLabel(next.id, "blocked-on-spec");
		expect(next.labelIds).toContain(shared.id);
		expect(linear.state.labels.filter((l) => l.name === "blocked-on-spec")).toHaveLength(1);
	});

	it("reports an outage as transient, and an unknown epic as not", async () => {
		const epic = epicIssue();
		linear.failNext(1, { status: 500 });
		const down = await tracker.epics
			.createSubIssue(epic.id, sub("X", marker("R4", "01")))
			.catch((e) => e);
		expect(down).toMatchObject({ name: "TrackerError", transient: true });
		linear.failNext(1, { status: 429 });
		const limited = await tracker.comment(epic.id, "x").catch((e) => e);
		expect(limited).toMatchObject({ name: "TrackerError", transient: true });
		const missing = await tracker.epics
			.findSubIssue("ENG-9999", marker("R4", "01"))
			.catch((e) => e);
		expect(missing).toMatchObject({ name: "TrackerError", transient: false });
		expect(missing.message).toMatch(/ENG-9999 was not found/);
	});
});
