import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { epicAnswer, runAnswer, runsAnswer } from "../../src/api/answers";
import { createApp } from "../../src/api/app";
import { newRun, type Run } from "../../src/domain/run";
import { diamondEpic, HIDDEN } from "../support/epics";
import { createStackWorld, type StackWorld } from "../support/stack";

// The epics API (docs/epics.md › Epics, docs/http-api.md › HTTP API) over real HTTP against the
// local stack: an epic's task graph, the run answers' kinds, starting an epic and continuing one.
// The messages the API queues are read from an app whose queue is recorded (the stack's pipeline
// would take them at once).

let w: StackWorld;
beforeAll(async () => {
	w = await createStackWorld();
});
afterAll(() => w.stop());

const store = () => {
	if (!w.stack) throw new Error("no stack");
	return w.stack.deps.store;
};
const auth = (token: string | undefined) => ({ authorization: `Bearer ${token}` });
const get = (p: string, token = w.stack?.apiToken) =>
	fetch(`${w.url()}${p}`, { headers: auth(token) });
const post = (p: string, body: string, token = w.stack?.apiToken) =>
	fetch(`${w.url()}${p}`, { method: "POST", body, headers: auth(token) });

/** The stack's app with a queue that keeps what is sent: the messages a request queued. */
function recorded() {
	if (!w.stack) throw new Error("no stack");
	const sent: { queue: string; message: Record<string, unknown> }[] = [];
	const app = createApp({
		...w.stack.deps,
		queue: {
			send: async (queue, message) => {
				sent.push({ queue, message: message as Record<string, unknown> });
			},
		},
	});
	const request = (p: string, body = "") =>
		app.request(p, { method: "POST", body, headers: auth(w.stack?.apiToken) });
	return { sent, request };
}

async function seeded() {
	const { epic, task } = diamondEpic();
	await store().createRun(epic);
	await store().createRun(task);
	return { epic, task };
}

describe("GET /api/epics/:id", () => {
	it("shows the epic's phase and task graph, without the tasks' bodies or the research", async () => {
		const { epic, task } = await seeded();
		const res = await get(`/api/epics/${epic.runId}`, w.stack?.readToken);
		expect(res.status).toBe(200);
		const text = await res.text();
		expect(text).not.toContain(HIDDEN);
		const view = epicAnswer.parse(JSON.parse(text));
		expect(view).toEqual({
			id: epic.runId,
			status: "running",
			issueKey: "ENG-900",
			title: "Reports, end to end",
			url: "https://linear.app/acme/issue/ENG-900",
			createdAt: epic.createdAt,
			updatedAt: epic.updatedAt,
			phase: "tasks",
			done: 1,
			total: 4,
			tasks: [
				{
					id: "01",
					title: "Add the model",
					repo: "api",
					dependsOn: [],
					status: "done",
					issue: { key: "ENG-901", url: "https://linear.app/acme/issue/ENG-901" },
					runId: expect.any(String),
					prUrls: ["https://github.com/acme/api/pull/71"],
				},
				{
					id: "02",
					title: "Serve it over HTTP",
					repo: "api",
					dependsOn: ["01"],
					status: "running",
					issue: { key: "ENG-902", url: "https://linear.app/acme/issue/ENG-902" },
					runId: task.runId,
				},
				{
					id: "03",
					title: "Show it on the page",
					repo: "web",
					dependsOn: ["01"],
					status: "failed",
					issue: { key: "ENG-903", url: "https://linear.app/acme/issue/ENG-903" },
					reason: "the agent gave up",
				},
				{
					id: "04",
					title: "Document it",
					repo: "api",
					dependsOn: ["02", "03"],
					status: "blocked",
					issue: { key: "ENG-904", url: "https://linear.app/acme/issue/ENG-904" },
					reason: "blocked by 03",
				},
			],
		});
	});

	it("shows the questions of an epic that needs a spec, and an epic not researched yet", async () => {
		const now = new Date().toISOString();
		const base = newRun({
			runId: ulid(),
			source: "linear",
			issueId: "vague",
			trigger: "api",
			now,
		});
		const vague: Run = {
			...base,
			status: "failed",
			epic: {
				research: { text: HIDDEN, needsSpec: ["Which formats?", "Who may export?"] },
				tasks: [],
			},
		};
		await store().createRun(vague);
		const view = epicAnswer.parse(await (await get(`/api/epics/${vague.runId}`)).json());
		expect(view).toMatchObject({
			phase: "needs_spec",
			questions: ["Which formats?", "Who may export?"],
			tasks: [],
			done: 0,
			total: 0,
		});
		const queued: Run = { ...base, runId: ulid(), epic: { tasks: [] } };
		await store().createRun(queued);
		expect(epicAnswer.parse(await (await get(`/api/epics/${queued.runId}`)).json())).toMatchObject({
			phase: "research",
			tasks: [],
			done: 0,
			total: 0,
		});
	});

	it("answers 404 saying why for a run that is not an epic, a task's run and an unknown run; 400 for a bad id", async () => {
		const { epic, task } = await seeded();
		const plain: Run = {
			...newRun({
				runId: ulid(),
				source: "linear",
				issueId: "plain",
				trigger: "webhook",
				now: new Date().toISOString(),
			}),
		};
		await store().createRun(plain);
		const answer = async (res: Response) => ({ status: res.status, body: await res.json() });
		expect(await answer(await get(`/api/epics/${plain.runId}`))).toEqual({
			status: 404,
			body: {
				error: `run ${plain.runId} is not an epic: it is an issue's run`,
			},
		});
		expect(await answer(await get(`/api/epics/${task.runId}`))).toEqual({
			status: 404,
			body: {
				error: `run ${task.runId} is not an epic: it is task 02 of epic ${epic.runId}`,
			},
		});
		const unknown = ulid();
		expect(await answer(await get(`/api/epics/${unknown}`))).toEqual({
			status: 404,
			body: { error: "run not found" },
		});
		expect((await get("/api/epics/NOPE")).status).toBe(400);
		// Another path under it is no route at all, with any token or none.
		expect((await fetch(`${w.url()}/api/epics/${epic.runId}/tasks`)).status).toBe(404);
		expect((await fetch(`${w.url()}/api/epics/${epic.runId}`)).status).toBe(401);
	});
});

describe("the run answers' kinds", () => {
	it("marks an epic run (with its graph, no bodies), a task's run (with its epic) and leaves an issue's run unmarked", async () => {
		const { epic, task } = await seeded();
		const text = await (await get(`/api/runs/${epic.runId}`)).text();
		expect(text).not.toContain(HIDDEN);
		const view = runAnswer.parse(JSON.parse(text));
		expect(view.kind).toBe("epic");
		const graph = epicAnswer.parse(await (await get(`/api/epics/${epic.runId}`)).json());
		// The same progress as GET /api/epics/:id shows, so the run page needs no second request.
		expect(view.epic).toEqual({
			phase: graph.phase,
			tasks: graph.tasks,
			done: graph.done,
			total: graph.total,
		});
		// Read raw: the schema would drop fields the answer must not carry (its dependencies' reports).
		const taskView = (await (await get(`/api/runs/${task.runId}`)).json()) as {
			epicTask?: unknown;
		};
		expect(runAnswer.parse(taskView).kind).toBe("task");
		expect(taskView.epicTask).toEqual({ runId: epic.runId, taskId: "02" });
		const listed = runsAnswer.parse(
			await (await get(`/api/runs?issue=${epic.issueKey}&limit=100`)).json(),
		);
		const inList = listed.runs.find((r) => r.id === epic.runId);
		expect(inList).toMatchObject({ kind: "epic", epic: { done: 1, total: 4 } });
		expect(JSON.stringify(listed)).not.toContain(HIDDEN);
		const plain = newRun({
			runId: ulid(),
			source: "linear",
			issueId: "plain-kind",
			trigger: "webhook",
			now: new Date().toISOString(),
		});
		await store().createRun(plain);
		const issueRun = runAnswer.parse(await (await get(`/api/runs/${plain.runId}`)).json());
		expect(issueRun).not.toHaveProperty("kind");
		expect(issueRun).not.toHaveProperty("epic");
	});
});

describe("POST /api/epics", () => {
	it("queues an intake request of kind epic and answers its id and kind", async () => {
		const { sent, request } = recorded();
		const res = await request("/api/epics", JSON.stringify({ issue: "ENG-42" }));
		expect(res.status).toBe(202);
		const body = (await res.json()) as { id: string; kind: string };
		expect(body).toEqual({ id: expect.stringMatching(/^[0-9A-Z]{26}$/), kind: "epic" });
		expect(sent).toEqual([
			{
				queue: "intake",
				message: {
					type: "run.requested",
					source: "linear",
					issueId: "ENG-42",
					trigger: "api",
					kind: "epic",
					runId: body.id,
					requestedAt: expect.any(String),
				},
			},
		]);
		// POST /api/runs asks for an issue's run: no kind.
		await request("/api/runs", JSON.stringify({ issue: "ENG-43" }));
		expect(sent[1]?.message).not.toHaveProperty("kind");
	});

	it("validates the body as POST /api/runs does, and refuses the read-only token", async () => {
		const answer = async (res: Response) => ({ status: res.status, body: await res.json() });
		expect(await answer(await post("/api/epics", "{"))).toEqual({
			status: 400,
			body: { error: "body is not valid JSON" },
		});
		expect(await answer(await post("/api/epics", JSON.stringify({ issue: 42 })))).toEqual({
			status: 400,
			body: {
				error: "invalid request",
				issues: ['issue: must be a string (an id, key or URL in quotes, e.g. "123"), not a number'],
			},
		});
		expect(
			await answer(await post("/api/epics", JSON.stringify({ issue: "ENG-1", source: "github" }))),
		).toEqual({
			status: 400,
			body: { error: "source github is not the configured source (linear)" },
		});
		const read = await post("/api/epics", JSON.stringify({ issue: "ENG-1" }), w.stack?.readToken);
		expect(read.status).toBe(403);
		expect(((await read.json()) as { error: string }).error).toMatch(/read-only/);
	});

	it("refuses with 503 while there is no config", async () => {
		if (!w.stack) throw new Error("no stack");
		const file = "/nowhere/config.yaml";
		const app = createApp({ ...w.stack.deps, config: () => ({ status: "missing", file }) });
		const res = await app.request("/api/epics", {
			method: "POST",
			body: JSON.stringify({ issue: "ENG-1" }),
			headers: auth(w.stack.apiToken),
		});
		expect(res.status).toBe(503);
		expect(await res.json()).toEqual({
			error: `no config at ${file}: runs cannot start until there is one (npx lisa init)`,
		});
	});
});

describe("POST /api/runs/:id/retry", () => {
	it("continues a finished epic (kind epic on the request) and retries an issue's run as before", async () => {
		const { epic } = diamondEpic();
		const failed: Run = { ...epic, status: "failed", finishedAt: new Date().toISOString() };
		await store().createRun(failed);
		const plain: Run = {
			...newRun({
				runId: ulid(),
				source: "linear",
				issueId: "plain-retry",
				trigger: "webhook",
				now: new Date().toISOString(),
			}),
			status: "failed",
		};
		await store().createRun(plain);
		const { sent, request } = recorded();
		const res = await request(`/api/runs/${failed.runId}/retry`);
		expect(res.status).toBe(202);
		const body = (await res.json()) as { id: string; retryOf: string };
		expect(body).toEqual({ id: expect.any(String), retryOf: failed.runId });
		expect(sent[0]).toEqual({
			queue: "intake",
			message: {
				type: "run.requested",
				source: "linear",
				issueId: failed.issueId,
				issueKey: "ENG-900",
				trigger: "retry",
				kind: "epic",
				runId: body.id,
				retryOf: failed.runId,
				requestedAt: expect.any(String),
			},
		});
		expect((await request(`/api/runs/${plain.runId}/retry`)).status).toBe(202);
		expect(sent[1]?.message).toMatchObject({ trigger: "retry", retryOf: plain.runId });
		expect(sent[1]?.message).not.toHaveProperty("kind");
	});

	it("refuses an epic run a later run continued, naming the one to continue", async () => {
		const { epic } = diamondEpic();
		const older: Run = {
			...epic,
			status: "failed",
			finishedAt: new Date().toISOString(),
			epic: { ...(epic.epic as NonNullable<Run["epic"]>), continuedBy: "01NEWERRUN" },
		};
		await store().createRun(older);
		const { sent, request } = recorded();
		const res = await request(`/api/runs/${older.runId}/retry`);
		expect(res.status).toBe(409);
		expect(await res.json()).toEqual({
			error: `epic run ${older.runId} was continued by run 01NEWERRUN: continue that one instead`,
		});
		expect(sent).toEqual([]);
	});

	it("refuses a task's run alone, naming its epic to continue", async () => {
		const { task } = diamondEpic();
		await store().createRun({ ...task, status: "failed", finishedAt: new Date().toISOString() });
		const { sent, request } = recorded();
		const res = await request(`/api/runs/${task.runId}/retry`);
		expect(res.status).toBe(409);
		const epicRun = task.epicTask?.runId;
		expect(await res.json()).toEqual({
			error: `run is task 02 of epic run ${epicRun}: continue the epic instead (npx lisa plan --continue ${epicRun})`,
		});
		expect(sent).toEqual([]);
	});
});
