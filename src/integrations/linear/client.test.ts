import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LinearDouble, startLinearDouble } from "../../../test/doubles/linear/server";
import { TrackerError } from "../tracker";
import { LinearTracker } from "./client";

let linear: LinearDouble;
let tracker: LinearTracker;
const query = {
	team: "ENG",
	label: "lisa",
	state: "Todo",
	workflow: ["Todo", "In Progress", "In Review"],
};

beforeAll(async () => {
	linear = await startLinearDouble();
	linear.addTeam({ key: "ENG", name: "Engineering" });
	linear.addTeam({ key: "OPS", name: "Operations" });
	tracker = LinearTracker.fromEnv(linear.apiKey, linear.url);
});
afterAll(() => linear.stop());

const add = (title: string, over: Partial<Parameters<LinearDouble["addIssue"]>[0]> = {}) =>
	linear.addIssue({ teamKey: "ENG", title, state: "Todo", labels: ["lisa"], ...over });

describe("Linear adapter (against the GraphQL double)", () => {
	it("lists the next issues like the original: priority order, none last, blocked ones skipped", async () => {
		const none = add("No priority");
		const low = add("Low", { priority: 4 });
		const urgent = add("Urgent", { priority: 1 });
		const blocked = add("Blocked", { priority: 1 });
		const blocker = add("Blocker", { labels: [], priority: 3 });
		linear.addRelation(blocker.identifier, "blocks", blocked.identifier);
		const unblocked = add("Was blocked", { priority: 2 });
		const done = add("Finished blocker", { labels: [], state: "Done" });
		linear.addRelation(done.identifier, "blocks", unblocked.identifier);
		add("Other label", { labels: ["bug"], priority: 1 });
		add("Other state", { state: "In Progress", priority: 1 });
		linear.addIssue({
			teamKey: "OPS",
			title: "Other team",
			state: "Todo",
			labels: ["lisa"],
			priority: 1,
		});

		const next = await tracker.nextIssues(query);
		expect(next.map((i) => i.title)).toEqual(["Urgent", "Was blocked", "Low", "No priority"]);
		expect(next[0]).toMatchObject({
			id: urgent.id,
			key: urgent.identifier,
			url: urgent.url,
			labels: ["lisa"],
		});
		expect(next.map((i) => i.id)).not.toContain(blocked.id);
		// The team by name works as well as by key; label and state names are case-insensitive.
		const byName = await tracker.nextIssues({
			...query,
			team: "engineering",
			label: "LISA",
			state: "todo",
		});
		expect(byName.map((i) => i.id)).toEqual(next.map((i) => i.id));
		expect(
			(await tracker.nextIssues({ ...query, state: "In Progress" })).map((i) => i.title),
		).toEqual(["Other state"]);
		expect(low.priority).toBe(4);
		expect(none.priority).toBe(0);
	});

	it("reads an issue with its state and labels in one request, and refuses unknown issues", async () => {
		const issue = add("Read me", { labels: ["lisa", "bug"] });
		const before = linear.requests.length;
		expect(await tracker.fetchIssue(issue.identifier)).toEqual({
			id: issue.id,
			key: issue.identifier,
			title: "Read me",
			description: "",
			url: issue.url,
			teamId: issue.teamId,
			labels: ["lisa", "bug"],
			state: "Todo",
			closed: false,
		});
		expect(linear.requests.length - before).toBe(1);
		expect(await tracker.fetchIssue(issue.url)).toMatchObject({ id: issue.id, state: "Todo" });
		// Completed and canceled issues are closed.
		for (const [state, closed] of [
			["In Review", false],
			["Done", true],
			["Canceled", true],
		] as const) {
			await tracker.moveTo(issue.id, state);
			expect(await tracker.fetchIssue(issue.id)).toMatchObject({ state, closed });
		}
		const err = await tracker.fetchIssue("ENG-9999").catch((e) => e);
		expect(err).toMatchObject({
			name: "TrackerError",
			transient: false,
			message: "Linear issue ENG-9999 was not found",
		});
	});

	it("filters by project when the config names one", async () => {
		const inProject = add("In the project", { project: "Website" });
		const next = await tracker.nextIssues({ ...query, project: "website" });
		expect(next.map((i) => i.id)).toEqual([inProject.id]);
	});

	it("moves within the issue's team by state name, and names the available states when one is missing", async () => {
		const issue = add("Move me");
		await tracker.moveTo(issue.id, "in review");
		expect(linear.stateName(issue)).toBe("In Review");
		const err = await tracker.moveTo(issue.id, "Shipped").catch((e) => e);
		expect(err).toBeInstanceOf(TrackerError);
		expect(err).toMatchObject({ transient: false });
		expect(err.message).toMatch(
			/workflow state "Shipped" not found .*available: Backlog, Todo, In Progress/,
		);
	});

	it("posts agent activities and links the run on the session", async () => {
		const issue = add("Delegated");
		const session = linear.addAgentSession({ issue: issue.id });
		await tracker.sessions.activity(session.id, { type: "thought", body: "On it" });
		await tracker.sessions.activity(session.id, {
			type: "action",
			action: "Working on",
			parameter: "ENG-1",
		});
		await tracker.sessions.link(session.id, "http://lisa/runs/01R", "Lisa run");
		const posted = linear.state.agentActivities.filter((a) => a.agentSessionId === session.id);
		expect(posted.map((a) => a.content)).toEqual([
			{ type: "thought", body: "On it" },
			{ type: "action", action: "Working on", parameter: "ENG-1" },
		]);
		expect(session.status).toBe("active");
		expect(session.externalUrls).toEqual([{ url: "http://lisa/runs/01R", label: "Lisa run" }]);
		// Its state as Linear reports it: live until a response (or error) ends it, or a dismissal.
		expect(await tracker.sessions.state(session.id)).toEqual({
			status: "active",
			dismissed: false,
		});
		await tracker.sessions.activity(session.id, { type: "response", body: "Done" });
		expect(await tracker.sessions.state(session.id)).toEqual({
			status: "complete",
			dismissed: false,
		});
		const dismissed = linear.addAgentSession({ issue: issue.id });
		expect(await tracker.sessions.state(dismissed.id)).toEqual({
			status: "pending",
			dismissed: false,
		});
		dismissed.dismissedAt = new Date().toISOString();
		expect((await tracker.sessions.state(dismissed.id)).dismissed).toBe(true);
		const unknown = await tracker.sessions.state("no-such-session").catch((e) => e);
		expect(unknown).toMatchObject({ name: "TrackerError", transient: false });
		const err = await tracker.sessions
			.activity("no-such-session", { type: "thought", body: "x" })
			.catch((e) => e);
		expect(err).toMatchObject({ name: "TrackerError", transient: false });
	});
});
