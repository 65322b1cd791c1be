import { afterAll, beforeAll, expect, it } from "vitest";
import { isTerminalRun, type RunStatus } from "../../src/domain/states";
import { stackLabel } from "../../src/local/container/setup";
import { type LocalStack, startLocalStack } from "../../src/local/stack";
import { createLogger } from "../../src/log";
import {
	bashReply,
	type OpenAiChatDouble,
	startOpenAiChatDouble,
} from "../doubles/models/openai-chat";
import { CONTAINER_AGENT_UIDS, describeWithImage, type TaskImage } from "../support/container";
import { git } from "../support/git";
import { startStackProcess } from "../support/process-stack";
import { createStackWorld, type StackWorld } from "../support/stack";
import type { ApiRun } from "../support/world";

// The local stack with LISA_LAUNCHER=container: each step in a container of the task image, with
// the built-in agent scripted by the chat double running its commands inside the container.

describeWithImage("the container launcher, end to end", (img) => {
	const ctx = containerWorld(img, { limits: "{max_attempts: 1}" });

	it("takes an issue to a pull request from a container of the image", async () => {
		const { w, llm } = ctx;
		llm.script(...greeting());
		const runId = await w.startRun("Add a greeting", "Add GREETING.md saying hello.");
		const run = await w.waitForRun(runId, undefined, 180_000);
		expect(run.error ?? "").toBe("");
		expect(run.status).toBe("succeeded");
		const branch = run.steps[0]?.branch as string;
		expect(await git(w.repo.path, "show", `${branch}:GREETING.md`)).toBe("Hello from a container");
		expect(run.steps[0]?.taskId).toMatch(/^lisa-[0-9a-f]{10}-/);
	}, 240_000);

	it("fails the run with the agent's own reason and leaves no container", async () => {
		const { w, llm } = ctx;
		const giveUp = "I cannot run the tests: the repository has no package.json.";
		llm.script(
			bashReply("Run the tests first.", "cat package.json"),
			// Five replies without a bash block: the built-in agent gives up (not a transient failure).
			...Array.from({ length: 5 }, () => giveUp),
		);
		const runId = await w.startRun("Fix the tests", "The test suite fails.");
		const run = await w.waitForRun(runId, ended, 180_000);
		expect(run.status).toBe("failed");
		expect(run.error).toContain("builtin: 5 replies in a row without exactly one bash block");
		expect(run.steps[0]?.attempt).toBe(1);
		const failed = (await timeline(w, runId)).find((e) => e.type === "agent.failed");
		// The command's own failure, from inside the container, is on the timeline.
		expect(failed?.message).toContain("cat: package.json: No such file or directory");
		expect(failed?.message).toContain("builtin: 5 replies in a row");
		await noContainerLeft(img, runId, 30_000);
	}, 240_000);

	it("cancels a run: its container is stopped within the grace and removed", async () => {
		const { w, llm } = ctx;
		llm.script(bashReply("Wait for the build.", "sleep 600"));
		const runId = await w.startRun("Wait a long time", "Sleep.");
		const taskId = await runningCommand(img, w, runId, "sleep 600");
		expect(await containersOf(img, runId)).toEqual([taskId]);
		const cancel = await w.api(`/api/runs/${runId}/cancel`, { method: "POST" });
		expect(cancel).toEqual({ status: 202, body: { id: runId, status: "cancelling" } });
		// `podman stop --time 10`: SIGTERM, SIGKILL after 10 s; then the launcher removes it.
		await noContainerLeft(img, runId, 30_000);
		const run = await w.waitForRun(runId, ended, 60_000);
		expect(run.status).toBe("cancelled");
		expect(run.steps[0]?.status).toBe("cancelled");
		expect(run.steps[0]?.attempt).toBe(1);
	}, 240_000);
});

describeWithImage("a container out of its memory", (img) => {
	const ctx = containerWorld(img, {
		limits: "{max_attempts: 2, retry_backoff_seconds: 0}",
		env: { LISA_AGENT_MEMORY: "0.25 GB" },
	});

	it("is a crash the timeline calls out of memory, retried as a transient failure", async () => {
		const { w, llm } = ctx;
		// Attempt 1 fills the container's 256 MiB with many 10 MiB processes: the OOM killer takes the
		// largest one, the task (PID 1), and the container ends 137. Attempt 2 does the work.
		llm.script(bashReply("Load the data set into memory.", MEMORY_HOG), ...greeting());
		const runId = await w.startRun("Add a greeting", "Add GREETING.md saying hello.");
		const run = await w.waitForRun(runId, undefined, 200_000);
		const events = await timeline(w, runId);
		// The launcher's own wait reports it (step.crashed), else the sweeper finds it (step.lost):
		// either way, the reason is the memory.
		const crashes = events.filter((e) => e.type === "step.crashed" || e.type === "step.lost");
		expect(
			crashes.map((e) => e.message),
			`the timeline:\n${summary(events)}`,
		).toEqual([
			expect.stringMatching(
				/stopped without reporting a result: out of memory: the task reached its memory limit of 256 MiB \(exit code 137\)$/,
			),
		]);
		expect(crashes[0]?.data).toMatchObject({ attempt: 1 });
		expect(events.find((e) => e.type === "step.retry")?.message).toMatch(
			/attempt 1 failed \(transient\): the agent task .*stopped without reporting a result: out of memory/,
		);
		expect(run.error ?? "").toBe("");
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]?.attempt).toBe(2);
		expect(run.steps[0]?.taskId).toMatch(/-attempt-2$/);
		// The first attempt died in its first command: every later reply went to attempt 2.
		expect(llm.turns).toHaveLength(4);
		await noContainerLeft(img, runId, 30_000);
	}, 240_000);
});

describeWithImage("the stack stopping while a container runs", (img) => {
	const ctx = containerWorld(img, { limits: "{max_attempts: 2, retry_backoff_seconds: 0}" });

	it("stops the container with the stack; the next start re-drives the step", async () => {
		const { w, llm } = ctx;
		llm.script(bashReply("Wait for the build.", "sleep 600"), ...greeting());
		const runId = await w.startRun("Add a greeting", "Add GREETING.md saying hello.");
		const first = await runningCommand(img, w, runId, "sleep 600");
		// The stack stops what it started (`podman stop --time 2`) and starts nothing more.
		await w.stack?.stop();
		expect(await containersOf(img, runId)).toEqual([]);
		// Nor a moment later: a container the stopping stack had launched would show by then.
		await new Promise((r) => setTimeout(r, 5000));
		expect(await containersOf(img, runId)).toEqual([]);

		const second = await restartInProcess(w);
		const run = await w.waitForRun(runId, undefined, 180_000);
		expect(run.error ?? "").toBe("");
		expect(run.status).toBe("succeeded");
		expect(run.steps[0]?.attempt).toBe(2);
		expect(run.steps[0]?.taskId).not.toBe(first);
		const events = await timeline(w, runId);
		expect(events.map((e) => e.type)).toContain("step.retry");
		await noContainerLeft(img, runId, 30_000);
		await second.stop();
	}, 240_000);
});

describeWithImage("the stack dying while a container runs", (img) => {
	const ctx = containerWorld(img, {
		limits: "{max_attempts: 2, retry_backoff_seconds: 0}",
		startStack: false,
	});

	it("leaves the container running; the next start removes it and re-drives the step", async () => {
		const { w, llm } = ctx;
		llm.script(bashReply("Wait for the build.", "sleep 600"), ...greeting());
		const first = await startStackProcess(w.env);
		w.onStop(() => first.stop());
		w.attach(first.url, first.token);
		const runId = await w.startRun("Add a greeting", "Add GREETING.md saying hello.");
		const orphan = await runningCommand(img, w, runId, "sleep 600").catch((err: Error) => {
			throw new Error(`${err.message}\n${first.output()}`);
		});
		await first.kill();
		// Nothing stops a container when its stack is SIGKILLed: a moment later it still runs.
		await new Promise((r) => setTimeout(r, 2000));
		expect(await img.call(["inspect", "--format", "{{.State.Status}}", orphan])).toBe("running\n");

		const second = await startStackProcess(w.env);
		w.onStop(() => second.stop());
		w.attach(second.url, second.token);
		// The start removed the orphan before it answered (a new attempt may already have started).
		expect(await containersOf(img, runId, 1)).toEqual([]);
		const run = await w.waitForRun(runId, undefined, 180_000).catch((err: Error) => {
			throw new Error(`${err.message}\n${second.output()}`);
		});
		// Re-driven: attempt 2 ran in a container of its own. (Whether it then succeeds depends on
		// which scripted model turns a loaded machine's retried requests used up, so it is not asked.)
		expect(run.steps[0]?.attempt).toBe(2);
		expect(run.steps[0]?.taskId).toBe(`${orphan.replace(/-attempt-1$/, "")}-attempt-2`);
		const events = await timeline(w, runId);
		expect(events.find((e) => e.type === "step.lost")?.message).toBe(
			`the agent task ${orphan} stopped without reporting a result`,
		);
		expect(events.map((e) => e.type)).toContain("step.retry");
		await noContainerLeft(img, runId, 30_000);
	}, 240_000);
});

// ---- helpers ----

/**
 * Many processes of 10 MiB each (`dd`'s buffer, held while it blocks on a pipe nobody reads), so
 * that the largest process in the container, the one the OOM killer picks, is the task itself.
 */
const MEMORY_HOG =
	"for i in $(seq 1 40); do (dd if=/dev/zero bs=10M count=1 2>/dev/null | sleep 600) >/dev/null 2>&1 & sleep 0.2; done; sleep 60";

/** The scripted turns of an agent that adds GREETING.md and its manifest. */
function greeting(): string[] {
	return [
		bashReply(
			"Write the greeting and commit it.",
			"id -u > /dev/null && printf 'Hello from a container\\n' > GREETING.md && git add -A && git commit -q -m 'feat: add a greeting'",
		),
		bashReply(
			"Write the manifest.",
			`cat <<'EOF' > .lisa-manifest.json\n{"prTitle": "feat: add a greeting", "prBody": "- **What**: a greeting\\n- **Testing**: none needed"}\nEOF`,
		),
		bashReply("Done.", "echo TASK_COMPLETE"),
	];
}

interface ContainerWorld {
	w: StackWorld;
	llm: OpenAiChatDouble;
}

/** A stack world whose steps run in containers of the image, its built-in agent scripted by `llm`. */
function containerWorld(
	img: TaskImage,
	opts: { limits: string; env?: Record<string, string>; startStack?: boolean },
): ContainerWorld {
	const ctx = {} as ContainerWorld;
	beforeAll(async () => {
		ctx.llm = await startOpenAiChatDouble();
		ctx.w = await createStackWorld({
			configExtra: `models: [builtin]\nlimits: ${opts.limits}`,
			startStack: opts.startStack,
			env: {
				LISA_LAUNCHER: "container",
				LISA_AGENT_UIDS: CONTAINER_AGENT_UIDS,
				LISA_IMAGE: img.image,
				LISA_LLM_BASE_URL: ctx.llm.url,
				LISA_LLM_API_KEY: ctx.llm.apiKey,
				LISA_LLM_MODEL: "local-model",
				...opts.env,
			},
		});
	}, 120_000);
	afterAll(async () => {
		// A test that failed half-way may leave a container (a `sleep 600`): none outlives the file.
		const stack = ctx.w && stackLabel(ctx.w.env.LISA_DATA_DIR as string);
		await ctx.w?.stop();
		await ctx.llm?.stop();
		if (!stack) return;
		const left = await img.call(["ps", "-aq", "--filter", `label=lisa.stack=${stack}`]);
		if (left.trim()) await img.call(["rm", "--force", "--time", "0", ...left.trim().split("\n")]);
	});
	return ctx;
}

/** A second in-process stack on the world's data dir, the world's helpers pointed at it. */
async function restartInProcess(w: StackWorld): Promise<LocalStack> {
	const stack = await startLocalStack({
		env: w.env,
		log: createLogger("lisa-test", w.env),
		sweepIntervalMs: 1000,
	});
	w.onStop(() => stack.stop());
	w.attach(stack.url, stack.apiToken);
	return stack;
}

const ended = (r: ApiRun) => isTerminalRun(r.status as RunStatus);

interface TimelineEvent {
	type: string;
	message: string;
	data?: Record<string, unknown>;
}

/** The timeline, a line an event, for a failure's message. */
const summary = (events: TimelineEvent[]) =>
	events.map((e) => `${e.type}: ${e.message.slice(0, 300)}`).join("\n");

async function timeline(w: StackWorld, runId: string): Promise<TimelineEvent[]> {
	const { body } = await w.api<{ events: TimelineEvent[] }>(`/api/runs/${runId}/events?limit=500`);
	return body.events;
}

/** The names of the run's containers, running or not (of one attempt when given). */
async function containersOf(img: TaskImage, runId: string, attempt?: number): Promise<string[]> {
	const filters = [
		`label=lisa.run=${runId}`,
		...(attempt ? [`label=lisa.attempt=${attempt}`] : []),
	];
	const out = await img.call([
		"ps",
		"--all",
		...filters.flatMap((f) => ["--filter", f]),
		"--format",
		"{{.Names}}",
	]);
	return out.split("\n").filter(Boolean);
}

/** Waits until the run has no container left; throws, naming them, after `timeoutMs`. */
async function noContainerLeft(img: TaskImage, runId: string, timeoutMs: number): Promise<void> {
	const start = Date.now();
	let left: string[] = [];
	while (Date.now() - start < timeoutMs) {
		left = await containersOf(img, runId);
		if (!left.length) return;
		await new Promise((r) => setTimeout(r, 500));
	}
	throw new Error(`after ${timeoutMs} ms run ${runId} still has containers: ${left.join(", ")}`);
}

/** Waits until the run's step 0 container runs `command` (podman top); its name (the task id). */
async function runningCommand(
	img: TaskImage,
	w: StackWorld,
	runId: string,
	command: string,
	timeoutMs = 120_000,
): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	let seen = "";
	while (Date.now() < deadline) {
		const { body } = await w.api<ApiRun>(`/api/runs/${runId}`);
		const taskId = body.steps?.[0]?.taskId;
		if (taskId) {
			seen = await img.call(["top", taskId, "args"]).catch((err: Error) => err.message);
			if (seen.includes(command)) return taskId;
		}
		await new Promise((r) => setTimeout(r, 1000));
	}
	throw new Error(`run ${runId} never ran \`${command}\` in its container; last seen: ${seen}`);
}
