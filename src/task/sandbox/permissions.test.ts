import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTaskWorld, type TaskWorld } from "../../../test/support/task";
import { TASK_WRITABLE } from "../../store/dynamo/table";

// In AWS the task runs under a role that may only read run items, update named attributes of run and
// guardrail items, and query/trim guardrails (infra/agent.ts, from TASK_WRITABLE). This holds the real
// task to that policy: a request outside it would be denied in AWS, losing heartbeats or reports.

let w: TaskWorld;
beforeAll(async () => {
	w = await createTaskWorld();
});
afterAll(() => w.stop());

type Input = {
	Key?: { pk?: string };
	UpdateExpression?: string;
	ConditionExpression?: string;
	ExpressionAttributeNames?: Record<string, string>;
	ExpressionAttributeValues?: Record<string, unknown>;
};

/** Top-level attribute names an update touches (IAM's dynamodb:Attributes); the store names them all. */
function topLevelAttributes(input: Input): string[] {
	const names = input.ExpressionAttributeNames ?? {};
	const expr = `${input.UpdateExpression ?? ""} ${input.ConditionExpression ?? ""}`;
	const paths = [...expr.matchAll(/(?<![.\w])#\w+/g)].map((m) => names[m[0]] ?? m[0]);
	return [...new Set(paths)];
}

function violation(command: string, raw: unknown): string | undefined {
	const input = raw as Input;
	const pk = input.Key?.pk ?? String(Object.values(input.ExpressionAttributeValues ?? {})[0] ?? "");
	const run = pk.startsWith("RUN#");
	const repo = pk.startsWith("REPO#");
	switch (command) {
		case "GetItemCommand":
			return run ? undefined : `GetItem on ${pk}`;
		case "UpdateItemCommand": {
			const allowed: readonly string[] = run
				? TASK_WRITABLE.run
				: repo
					? TASK_WRITABLE.guardrail
					: [];
			if (!run && !repo) return `UpdateItem on ${pk}`;
			const extra = topLevelAttributes(input).filter(
				(a) => a !== "pk" && a !== "sk" && !allowed.includes(a),
			);
			return extra.length ? `UpdateItem on ${pk} touches ${extra.join(", ")}` : undefined;
		}
		case "QueryCommand":
		case "DeleteItemCommand":
			return repo ? undefined : `${command} on ${pk}`;
		default:
			return `${command} is not allowed at all`;
	}
}

describe("the agent task stays within its IAM policy", () => {
	it("reads, heartbeats, writes events, guardrails and its report only through allowed requests", async () => {
		const runId = await w.newRun(
			{ title: "Needs a retry", description: "lisa-fake: broken-until-retry" },
			`    validate:\n      - 'test "$(cat status.txt)" = ok || { echo "status is broken"; exit 1; }'\n`,
		);
		const seen: { command: string; input: unknown }[] = [];
		const stop = w.store.observe((command, input) => seen.push({ command, input }));
		try {
			expect(await w.runTask(runId)).toMatchObject({ outcome: "succeeded" });
		} finally {
			stop();
		}
		const commands = new Set(seen.map((s) => s.command));
		// The run read, step writes and events, the guardrail written and read: all kinds happened.
		for (const c of ["GetItemCommand", "UpdateItemCommand", "QueryCommand"])
			expect(commands).toContain(c);
		expect(seen.some((s) => (s.input as Input).Key?.pk?.startsWith("REPO#"))).toBe(true);
		expect(seen.map((s) => violation(s.command, s.input)).filter(Boolean)).toEqual([]);
	});

	it("the policy model refuses what the role refuses", () => {
		expect(violation("PutItemCommand", { Item: {} })).toMatch(/not allowed/);
		expect(
			violation("UpdateItemCommand", {
				Key: { pk: "RUN#x" },
				UpdateExpression: "SET #s = :v",
				ExpressionAttributeNames: { "#s": "status" },
			}),
		).toBe("UpdateItem on RUN#x touches status");
		expect(
			violation("UpdateItemCommand", {
				Key: { pk: "ISSUE#linear#1" },
				UpdateExpression: "SET #r = :v",
				ExpressionAttributeNames: { "#r": "runId" },
			}),
		).toMatch(/UpdateItem on ISSUE/);
		expect(
			violation("UpdateItemCommand", {
				Key: { pk: "RUN#x" },
				UpdateExpression: "SET #a[0].#b = :v",
				ExpressionAttributeNames: { "#a": "steps", "#b": "heartbeatAt" },
			}),
		).toBeUndefined();
	});
});
