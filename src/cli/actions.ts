import type { LisaClient } from "./client";
import { runPath } from "./timeline";

// `lisa cancel <run>` and `lisa retry <run>`: POST /api/runs/:id/cancel and /retry
// (docs/http-api.md › HTTP API). Lisa's refusals (already finished, still running, a read-only
// token) are printed as it says them.

export async function cancelCommand(
	client: LisaClient,
	runId: string,
	print: (line: string) => void,
): Promise<number> {
	const { body } = await client.post<{ id: string }>(runPath(runId, "cancel"), `no run ${runId}`);
	print(
		`cancelling run ${body.id}: its tasks are stopped; npx lisa status ${body.id} --watch follows it`,
	);
	return 0;
}

export async function retryCommand(
	client: LisaClient,
	runId: string,
	print: (line: string) => void,
): Promise<number> {
	const { body } = await client.post<{ id: string; retryOf: string }>(
		runPath(runId, "retry"),
		`no run ${runId}`,
	);
	print(`run ${body.id} retries ${body.retryOf}: npx lisa status ${body.id} --watch follows it`);
	return 0;
}
