import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newRunId } from "../../src/domain/ids";
import { describeWithImage } from "../support/container";

// The task as a container's PID 1 (docs/agent-task.md › The container): a PID 1 ignores SIGTERM
// unless it handles it, and a stop would then wait out the whole grace for SIGKILL. The task here
// waits on a store that accepts connections and never answers; `podman stop` must end it at once,
// with SIGTERM's code.

describeWithImage("the task as PID 1", (img) => {
	let store: Server;
	const sockets: Socket[] = [];
	const name = `lisa-test-sigterm-${process.pid}`;
	beforeAll(async () => {
		store = createServer((s) => sockets.push(s));
		await new Promise<void>((r) => store.listen(0, "127.0.0.1", r));
	});
	afterAll(async () => {
		await img.call(["rm", "--force", "--time", "0", name]).catch(() => {});
		for (const s of sockets) s.destroy();
		await new Promise((r) => store.close(r));
	});

	it("ends on SIGTERM without waiting for the grace's SIGKILL", async () => {
		const port = (store.address() as { port: number }).port;
		const env = {
			LISA_RUN_ID: newRunId(),
			LISA_STEP_INDEX: "0",
			LISA_ATTEMPT: "1",
			LISA_TABLE_NAME: "lisa",
			LISA_EVENTS_QUEUE_URL: `http://127.0.0.1:${port}/events`,
			LISA_DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`,
			LISA_LOCAL_AWS_KEY: "LISA0123456789",
		};
		await img.call([
			"run",
			"--detach",
			"--name",
			name,
			"--network",
			"host",
			...img.runtime.limits,
			...Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
			img.image,
		]);
		await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(0);
		const started = Date.now();
		await img.call(["stop", "--time", "20", name]);
		expect(Date.now() - started).toBeLessThan(10_000);
		const exit = await img.call(["container", "inspect", "--format", "{{.State.ExitCode}}", name]);
		expect(exit.trim()).toBe("143");
	}, 120_000);
});
