import { LinearClient, LinearError, LinearErrorType } from "@linear/sdk";
import { LinearWebhookClient } from "@linear/sdk/webhooks";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type DoubleIssue, type LinearDouble, startLinearDouble } from "./server";
import { agentSessionWebhook, issueWebhook, linearHeaders, signLinear } from "./webhook";

let linear: LinearDouble;
let client: LinearClient;
let issue: DoubleIssue;

beforeEach(async () => {
	linear = await startLinearDouble();
	linear.addTeam({ key: "ENG", name: "Engineering" });
	linear.addTeam({ key: "OPS", name: "Operations", states: ["Triage", "Todo", "Doing", "Done"] });
	issue = linear.addIssue({
		teamKey: "ENG",
		title: "Login button does nothing",
		description: "Clicking **Login** has no effect.",
		labels: ["lisa", "bug"],
		priority: 2,
		project: "Auth revamp",
	});
	linear.addIssue({ teamKey: "ENG", title: "Second issue", state: "Todo" });
	linear.addIssue({ teamKey: "OPS", title: "Rotate keys", labels: ["lisa"], state: "Doing" });
	client = new LinearClient({ apiKey: linear.apiKey, apiUrl: linear.url });
});

afterEach(async () => {
	await linear.stop();
});

/** The rejection of a promise, which must reject. */
async function failure(promise: Promise<unknown>): Promise<LinearError> {
	const err = await promise.then(
		() => undefined,
		(e: unknown) => e,
	);
	expect(err).toBeInstanceOf(LinearError);
	return err as LinearError;
}

describe("reading issues through @linear/sdk", () => {
	test("fetches an issue by identifier and by id", async () => {
		const byKey = await client.issue("ENG-1");
		expect(byKey.id).toBe(issue.id);
		expect(byKey.identifier).toBe("ENG-1");
		expect(byKey.number).toBe(1);
		expect(byKey.title).toBe("Login button does nothing");
		expect(byKey.description).toBe("Clicking **Login** has no effect.");
		expect(byKey.url).toBe("https://linear.app/acme/issue/ENG-1/login-button-does-nothing");
		expect(byKey.priority).toBe(2);
		expect(byKey.priorityLabel).toBe("High");
		expect(byKey.teamId).toBe(issue.teamId);
		expect(byKey.stateId).toBe(issue.stateId);
		expect(byKey.labelIds).toEqual(issue.labelIds);
		expect(byKey.createdAt.toISOString()).toBe(issue.createdAt);

		const byId = await client.issue(issue.id);
		expect(byId.identifier).toBe("ENG-1");
		expect((await client.issue("eng-1")).id).toBe(issue.id);
		expect(linear.requests.map((r) => r.operationName)).toEqual(["issue", "issue", "issue"]);
	});

	test("resolves team, states, state, labels and project lazily", async () => {
		const fetched = await client.issue("ENG-1");
		const team = await fetched.team;
		expect(team?.key).toBe("ENG");
		expect(team?.name).toBe("Engineering");
		const states = await team?.states({ first: 100 });
		expect(states?.nodes.map((s) => [s.name, s.type, s.position])).toEqual([
			["Backlog", "backlog", 0],
			["Todo", "unstarted", 1],
			["In Progress", "started", 2],
			["In Review", "started", 3],
			["Done", "completed", 4],
			["Canceled", "canceled", 5],
		]);
		expect((await fetched.state)?.name).toBe("Backlog");
		expect((await fetched.labels()).nodes.map((l) => l.name)).toEqual(["lisa", "bug"]);
		expect((await fetched.project)?.name).toBe("Auth revamp");
		expect((await team?.labels())?.nodes.map((l) => l.name)).toEqual(["lisa", "bug"]);

		const ops = await client.team("OPS");
		expect((await ops.states()).nodes.map((s) => `${s.name}:${s.type}`)).toEqual([
			"Triage:triage",
			"Todo:unstarted",
			"Doing:started",
			"Done:completed",
		]);
		expect(linear.requests.map((r) => r.operationName)).toEqual([
			"issue",
			"team",
			"team_states",
			"workflowState",
			"issue_labels",
			"project",
			"team_labels",
			"team",
			"team_states",
		]);
	});

	test("answers the viewer, configurable through state", async () => {
		const viewer = await client.viewer;
		expect(viewer.id).toBe(linear.state.viewer.id);
		expect(viewer.name).toBe("Lisa");
		expect(viewer.email).toBe("lisa@acme.test");
		expect(viewer.isMe).toBe(true);
		linear.state.viewer.name = "Lisa Bot";
		expect((await client.viewer).name).toBe("Lisa Bot");
	});

	test("lists issues with filters and pagination", async () => {
		const titles = async (filter: Parameters<LinearClient["issues"]>[0]) =>
			(await client.issues(filter)).nodes.map((i) => i.identifier);
		expect(await titles({ filter: { team: { key: { eq: "ENG" } } } })).toEqual(["ENG-1", "ENG-2"]);
		expect(await titles({ filter: { team: { name: { eq: "Operations" } } } })).toEqual(["OPS-1"]);
		expect(await titles({ filter: { team: { id: { eq: issue.teamId } } } })).toEqual([
			"ENG-1",
			"ENG-2",
		]);
		expect(await titles({ filter: { labels: { name: { eq: "lisa" } } } })).toEqual([
			"ENG-1",
			"OPS-1",
		]);
		expect(
			await titles({ filter: { labels: { some: { name: { eqIgnoreCase: "BUG" } } } } }),
		).toEqual(["ENG-1"]);
		expect(await titles({ filter: { state: { name: { eq: "Todo" } } } })).toEqual(["ENG-2"]);
		expect(await titles({ filter: { state: { type: { eq: "started" } } } })).toEqual(["OPS-1"]);
		expect(await titles({ filter: { project: { name: { eq: "Auth revamp" } } } })).toEqual([
			"ENG-1",
		]);
		expect(
			await titles({
				filter: {
					team: { key: { eq: "ENG" } },
					labels: { name: { eq: "lisa" } },
					state: { type: { nin: ["completed", "canceled"] } },
				},
			}),
		).toEqual(["ENG-1"]);

		const first = await client.issues({ first: 2 });
		expect(first.nodes.map((i) => i.identifier)).toEqual(["ENG-1", "ENG-2"]);
		expect(first.pageInfo.hasNextPage).toBe(true);
		await first.fetchNext();
		expect(first.nodes.map((i) => i.identifier)).toEqual(["ENG-1", "ENG-2", "OPS-1"]);
		expect(first.pageInfo.hasNextPage).toBe(false);
	});

	test("filters workflow states and labels", async () => {
		const states = await client.workflowStates({ filter: { team: { id: { eq: issue.teamId } } } });
		expect(states.nodes).toHaveLength(6);
		const done = states.nodes.find((s) => s.name === "Done");
		expect((await client.workflowState(done?.id ?? "")).type).toBe("completed");
		const labels = await client.issueLabels({ filter: { name: { eq: "bug" } } });
		expect(labels.nodes.map((l) => l.name)).toEqual(["bug"]);
	});

	test("serves blocking relations in both directions", async () => {
		linear.addRelation("ENG-2", "blocks", "ENG-1");
		const blocked = await client.issue("ENG-1");
		const inverse = await blocked.inverseRelations();
		expect(inverse.nodes.map((r) => r.type)).toEqual(["blocks"]);
		expect(inverse.nodes[0]?.issueId).toBe(linear.issue("ENG-2").id);
		expect((await inverse.nodes[0]?.issue)?.identifier).toBe("ENG-2");
		const blocking = await (await client.issue("ENG-2")).relations();
		expect(blocking.nodes[0]?.relatedIssueId).toBe(issue.id);
	});
});

describe("writing through @linear/sdk", () => {
	test("moves an issue to another state and records the update", async () => {
		const team = await (await client.issue("ENG-1")).team;
		const review = (await team?.states())?.nodes.find((s) => s.name === "In Review");
		const result = await client.updateIssue(issue.id, { stateId: review?.id });
		expect(result.success).toBe(true);
		expect(result.issueId).toBe(issue.id);
		expect(linear.stateName(issue)).toBe("In Review");
		expect(linear.issue("ENG-1").startedAt).not.toBeNull();
		expect(linear.state.issueUpdates).toEqual([
			{
				issueId: issue.id,
				identifier: "ENG-1",
				mutation: "issueUpdate",
				input: { stateId: review?.id },
				at: expect.any(String),
			},
		]);
		expect((await client.issue("ENG-1")).stateId).toBe(review?.id);
		expect((await result.issue)?.title).toBe("Login button does nothing");
	});

	test("rejects a state of another team", async () => {
		const opsState = linear.state.states.find((s) => s.name === "Doing");
		const err = await failure(client.updateIssue(issue.id, { stateId: opsState?.id }));
		expect(err.type).toBe(LinearErrorType.InvalidInput);
		expect(linear.stateName(issue)).toBe("Backlog");
	});

	test("changes labels by labelIds, added/removed ids and issueAddLabel/issueRemoveLabel", async () => {
		const [lisa, bug] = issue.labelIds;
		await client.updateIssue(issue.id, { labelIds: [bug ?? ""] });
		expect(linear.labelNames(issue)).toEqual(["bug"]);
		await client.updateIssue(issue.id, {
			addedLabelIds: [lisa ?? ""],
			removedLabelIds: [bug ?? ""],
		});
		expect(linear.labelNames(issue)).toEqual(["lisa"]);
		const workspaceLabel = linear.addLabel(null, "needs-review");
		await client.issueAddLabel(issue.id, workspaceLabel.id);
		expect(linear.labelNames("ENG-1")).toEqual(["lisa", "needs-review"]);
		await client.issueRemoveLabel(issue.id, lisa ?? "");
		expect(linear.labelNames("ENG-1")).toEqual(["needs-review"]);
		expect(linear.state.issueUpdates.map((u) => u.mutation)).toEqual([
			"issueUpdate",
			"issueUpdate",
			"issueAddLabel",
			"issueRemoveLabel",
		]);
		const err = await failure(client.updateIssue(issue.id, { labelIds: ["no-such-label"] }));
		expect(err.type).toBe(LinearErrorType.InvalidInput);
	});

	test("updates title and description, keeping the url in step", async () => {
		await client.updateIssue(issue.id, { title: "Login works again", description: "Fixed." });
		const fetched = await client.issue("ENG-1");
		expect(fetched.title).toBe("Login works again");
		expect(fetched.description).toBe("Fixed.");
		expect(fetched.url).toBe("https://linear.app/acme/issue/ENG-1/login-works-again");
	});

	test("creates a comment as the viewer", async () => {
		const result = await client.createComment({ issueId: issue.id, body: "Working on it." });
		expect(result.success).toBe(true);
		expect(linear.state.comments).toEqual([
			expect.objectContaining({
				id: result.commentId,
				issueId: issue.id,
				body: "Working on it.",
				userId: linear.state.viewer.id,
			}),
		]);
		const comments = await (await client.issue("ENG-1")).comments();
		expect(comments.nodes.map((c) => c.body)).toEqual(["Working on it."]);
		expect((await comments.nodes[0]?.user)?.id).toBe(linear.state.viewer.id);
		const comment = await client.comment({ id: result.commentId ?? "" });
		expect(comment.body).toBe("Working on it.");
		expect(comment.url).toMatch(/^https:\/\/linear\.app\/acme\/issue\/ENG-1\/.*#comment-/);
	});

	test("links a URL as an attachment, once per URL", async () => {
		const url = "https://github.com/acme/app/pull/7";
		const first = await client.attachmentLinkURL(issue.id, url, { title: "PR #7" });
		expect(first.success).toBe(true);
		const second = await client.attachmentLinkURL(issue.id, url, { title: "PR #7: fix login" });
		expect(second.attachmentId).toBe(first.attachmentId);
		expect(linear.state.attachments).toEqual([
			expect.objectContaining({ issueId: issue.id, url, title: "PR #7: fix login" }),
		]);
		const created = await client.createAttachment({
			issueId: issue.id,
			url: "https://ci.example/run/1",
			title: "CI run",
			subtitle: "passed",
		});
		const attachment = await client.attachment(created.attachmentId ?? "");
		expect([attachment.title, attachment.subtitle, attachment.url]).toEqual([
			"CI run",
			"passed",
			"https://ci.example/run/1",
		]);
		const listed = await (await client.issue("ENG-1")).attachments();
		expect(listed.nodes.map((a) => a.title)).toEqual(["PR #7: fix login", "CI run"]);
	});

	test("records agent activities and session updates", async () => {
		const session = linear.addAgentSession({ issue: "ENG-1" });
		const result = await client.createAgentActivity({
			agentSessionId: session.id,
			content: { type: "thought", body: "Reading the code." },
		});
		expect(result.success).toBe(true);
		expect(linear.state.agentActivities[0]?.content).toEqual({
			type: "thought",
			body: "Reading the code.",
		});
		expect(session.status).toBe("active");
		const activity = await result.agentActivity;
		expect(activity?.content).toMatchObject({ type: "thought", body: "Reading the code." });

		await client.createAgentActivity({
			agentSessionId: session.id,
			content: { type: "response", body: "Opened a PR." },
		});
		expect(session.status).toBe("complete");

		const update = await client.updateAgentSession(session.id, {
			addedExternalUrls: [{ label: "Pull request", url: "https://github.com/acme/app/pull/7" }],
		});
		expect(update.success).toBe(true);
		expect(linear.state.agentSessionUpdates[0]?.input).toEqual({
			addedExternalUrls: [{ label: "Pull request", url: "https://github.com/acme/app/pull/7" }],
		});
		expect(session.externalUrls).toEqual([
			{ label: "Pull request", url: "https://github.com/acme/app/pull/7" },
		]);

		const bad = await failure(
			client.createAgentActivity({
				agentSessionId: "nope",
				content: { type: "thought", body: "x" },
			}),
		);
		expect(bad.message).toContain("Entity not found: AgentSession");
	});
});

describe("errors", () => {
	test("an unknown issue is Linear's invalid-input 'Entity not found'", async () => {
		const err = await failure(client.issue("ENG-999"));
		expect(err.type).toBe(LinearErrorType.InvalidInput);
		expect(err.message).toContain("Entity not found: Issue");
		expect(err.errors?.[0]?.message).toBe("Could not find referenced Issue.");
	});

	test("a wrong API key is an authentication error", async () => {
		const wrong = new LinearClient({ apiKey: "lin_api_wrong", apiUrl: linear.url });
		const err = await failure(wrong.viewer);
		expect(err.type).toBe(LinearErrorType.AuthenticationError);
		expect(err.status).toBe(400);
		expect(err.message).toContain("Authentication required, not authenticated");
	});

	test("failNext makes the next requests fail, then recovers", async () => {
		linear.failNext(1);
		const err = await failure(client.issue("ENG-1"));
		expect(err.type).toBe(LinearErrorType.InternalError);
		expect(err.status).toBe(500);
		expect((await client.issue("ENG-1")).id).toBe(issue.id);

		linear.failNext(1, { status: 429, retryAfterSeconds: 3 });
		const limited = await failure(client.viewer);
		expect(limited.type).toBe(LinearErrorType.Ratelimited);
		expect((limited as LinearError & { retryAfter?: number }).retryAfter).toBe(3);

		linear.failNext(2, { status: 502 });
		expect((await failure(client.viewer)).type).toBe(LinearErrorType.NetworkError);
		expect((await failure(client.viewer)).type).toBe(LinearErrorType.NetworkError);
		expect((await client.viewer).name).toBe("Lisa");
		expect(linear.requests.map((r) => r.status)).toEqual([500, 200, 429, 502, 502, 200]);
	});

	test("operations the double does not implement fail loudly", async () => {
		const err = await failure(client.createProject({ name: "X", teamIds: [issue.teamId] }));
		expect(err.message).toContain("not implemented in the Linear double: projectCreate");
	});

	test("filter fields the double does not model fail loudly", async () => {
		const err = await failure(client.issues({ filter: { cycle: { number: { eq: 1 } } } }));
		expect(err.message).toContain("not implemented in the Linear double: filter field");
	});
});

describe("webhooks", () => {
	const secret = "whsec_test_secret";

	test("signLinear produces what LinearWebhookClient verifies", () => {
		const payload = issueWebhook({ action: "update", issue, double: linear });
		const raw = JSON.stringify(payload);
		const signature = signLinear(raw, secret);
		expect(signature).toMatch(/^[0-9a-f]{64}$/);
		const verifier = new LinearWebhookClient(secret);
		expect(verifier.verify(Buffer.from(raw), signature)).toBe(true);
		expect(() => verifier.verify(Buffer.from(`${raw} `), signature)).toThrow();
		const stale = JSON.stringify(
			issueWebhook({ action: "update", issue, double: linear, timestamp: Date.now() - 120_000 }),
		);
		expect(() => verifier.verify(Buffer.from(stale), signLinear(stale, secret))).toThrow(
			/timestamp/,
		);
	});

	test("issueWebhook mirrors the issue as the double holds it", () => {
		const payload = issueWebhook({
			action: "update",
			issue,
			double: linear,
			updatedFrom: { labelIds: [] },
			timestamp: 1_750_000_000_000,
		});
		expect(payload).toMatchObject({
			action: "update",
			type: "Issue",
			url: issue.url,
			organizationId: linear.state.organization.id,
			webhookTimestamp: 1_750_000_000_000,
			createdAt: new Date(1_750_000_000_000).toISOString(),
			updatedFrom: { labelIds: [] },
			actor: { type: "user", name: "Pat Human" },
			data: {
				id: issue.id,
				identifier: "ENG-1",
				number: 1,
				title: "Login button does nothing",
				priority: 2,
				teamId: issue.teamId,
				team: { id: issue.teamId, key: "ENG", name: "Engineering" },
				stateId: issue.stateId,
				state: { id: issue.stateId, name: "Backlog", type: "backlog" },
				labelIds: issue.labelIds,
				labels: [
					{ id: issue.labelIds[0], name: "lisa" },
					{ id: issue.labelIds[1], name: "bug" },
				],
			},
		});
		const headers = linearHeaders(JSON.stringify(payload), secret, "delivery-1");
		expect(headers).toMatchObject({
			"content-type": "application/json; charset=utf-8",
			"linear-delivery": "delivery-1",
			"linear-event": "Issue",
			"linear-signature": signLinear(JSON.stringify(payload), secret),
		});
	});

	test("agentSessionWebhook registers the session so the agent can answer it", async () => {
		const created = agentSessionWebhook({
			action: "created",
			double: linear,
			issue,
			commentBody: "@lisa please fix",
		});
		expect(created).toMatchObject({
			type: "AgentSessionEvent",
			action: "created",
			appUserId: linear.state.viewer.id,
			agentSession: {
				issue: { id: issue.id, identifier: "ENG-1", team: { key: "ENG" } },
				comment: { body: "@lisa please fix" },
				creator: { name: "Pat Human" },
			},
		});
		const sessionId = created.agentSession.id;
		const raw = JSON.stringify(created);
		expect(new LinearWebhookClient(secret).verify(Buffer.from(raw), signLinear(raw, secret))).toBe(
			true,
		);

		await client.createAgentActivity({
			agentSessionId: sessionId,
			content: { type: "elicitation", body: "Which browser?" },
		});
		const session = linear.state.agentSessions.find((s) => s.id === sessionId);
		expect(session?.status).toBe("awaitingInput");

		const prompted = agentSessionWebhook({
			action: "prompted",
			double: linear,
			session,
			promptBody: "Safari",
		});
		expect(prompted.agentActivity).toMatchObject({
			agentSessionId: sessionId,
			content: { type: "prompt", body: "Safari" },
		});
		expect(linear.state.comments.map((c) => c.body)).toEqual(["@lisa please fix", "Safari"]);
	});
});

describe("creating labels through @linear/sdk", () => {
	test("creates a team label once: a second of the same name in the team is refused", async () => {
		const team = linear.state.teams.find((t) => t.key === "ENG");
		const made = await client.createIssueLabel({ name: "needs-spec", teamId: team?.id });
		expect(made.success).toBe(true);
		expect(linear.state.labels.find((l) => l.id === made.issueLabelId)).toMatchObject({
			name: "needs-spec",
			teamId: team?.id,
		});
		const twice = await failure(client.createIssueLabel({ name: "Needs-Spec", teamId: team?.id }));
		expect(twice.type).toBe(LinearErrorType.InvalidInput);
		expect(twice.message).toMatch(/Duplicate label name/);
		// Another team, or the workspace, may have its own.
		const ops = linear.state.teams.find((t) => t.key === "OPS");
		expect((await client.createIssueLabel({ name: "needs-spec", teamId: ops?.id })).success).toBe(
			true,
		);
		expect((await client.createIssueLabel({ name: "needs-spec" })).success).toBe(true);
		const blank = await failure(client.createIssueLabel({ name: "  " }));
		expect(blank.type).toBe(LinearErrorType.InvalidInput);
	});
});

describe("users and their teams through @linear/sdk", () => {
	test("a team's members are its active members, a user's teams are theirs, guests say so", async () => {
		const [eng, ops] = ["ENG", "OPS"].map((k) => linear.state.teams.find((t) => t.key === k));
		const everywhere = linear.addUser({ name: "Ada Member" });
		const guest = linear.addUser({ name: "Gus Guest", guest: true, teams: ["OPS"] });
		const gone = linear.addUser({ name: "Del Gone", active: false });
		const names = async (key: string, includeDisabled?: boolean) =>
			(await (await client.team(key)).members({ includeDisabled })).nodes.map((u) => u.name);

		expect(await names("ENG")).toEqual(["Lisa", "Ada Member"]);
		expect(await names("OPS")).toEqual(["Lisa", "Ada Member", "Gus Guest"]);
		expect(await names("ENG", true)).toEqual(["Lisa", "Ada Member", "Del Gone"]);
		const teamsOf = async (id: string) => (await (await client.user(id)).teams()).nodes;
		expect((await teamsOf(guest.id)).map((t) => t.id)).toEqual([ops?.id]);
		expect((await teamsOf(everywhere.id)).map((t) => t.id)).toEqual([eng?.id, ops?.id]);
		expect(await client.user(guest.id)).toMatchObject({ guest: true, active: true });
		expect(await client.user(gone.id)).toMatchObject({ guest: false, active: false });
	});
});
