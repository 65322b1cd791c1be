import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskWorld, type TaskWorld } from "../../../test/support/task";
import { createLogger } from "../../log";
import { Heartbeat } from "../report/heartbeat";
import { Timeline } from "../report/timeline";
import { runProcess } from "../sandbox/process";
import { supervise } from "./supervise";

// The output the supervisor shows on the run's timeline, from a real process, through a real store:
// redacted as one stream before it is cut into events, so no secret passes in pieces.

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld();
});
afterAll(() => w.stop());

const SECRET = "custom-secret-value-0123456789abcdef";
const log = createLogger("supervise-test", { LOG_LEVEL: "silent" });

/** Runs `script` (node) under the supervisor, flushing output events at every tick. */
async function watch(script: string) {
	const runId = await w.newRun({ title: "Supervised" });
	const heartbeat = new Heartbeat(w.store, runId, 0, 1, () => {});
	const timeline = new Timeline(w.store, runId, 0, [SECRET], log);
	const done = await supervise(
		(io) =>
			runProcess(process.execPath, ["-e", script], {
				cwd: w.dir,
				env: { PATH: process.env.PATH },
				onOutput: io.onOutput,
				signal: io.signal,
				timeoutMs: 60_000,
			}).then((r) => ({ ok: r.code === 0, output: r.output, exitCode: r.code, timedOut: false })),
		{ staleMs: 60_000, heartbeat, timeline, label: "fake", outputEventMs: 1, secrets: [SECRET] },
	);
	expect(done.result.ok).toBe(true);
	return (await w.events(runId)).filter((e) => e.type === "agent.output").map((e) => e.message);
}

describe("the supervisor's output events", () => {
	it("show a secret split across two events as redacted, never in pieces", async () => {
		// The first half, then a pause of several ticks (each flushes), then the rest.
		const events = await watch(`
			process.stdout.write("line one\\nthe key is ${SECRET.slice(0, 14)}");
			setTimeout(() => process.stdout.write("${SECRET.slice(14)} and more\\n"), 4000);
		`);
		// The pause did flush: the complete line came out before the secret's line ended.
		expect(events.length).toBeGreaterThanOrEqual(2);
		expect(events[0]).toBe("line one\n");
		const all = events.join("");
		expect(all).toContain("the key is [redacted] and more");
		expect(all).not.toContain(SECRET.slice(0, 14));
		expect(all).not.toContain(SECRET.slice(14));
	});

	it("cut to its last 1,500 characters only after redacting", async () => {
		// One long line whose 1,500-character tail starts inside the secret.
		const events = await watch(`
			process.stdout.write("x".repeat(100) + " ${SECRET} " + "y".repeat(1480));
		`);
		const all = events.join("");
		expect(all.length).toBeLessThanOrEqual(1500);
		expect(all).toMatch(/y{1400}$/);
		for (const piece of [SECRET.slice(-12), SECRET.slice(-20)]) expect(all).not.toContain(piece);
	});
});
