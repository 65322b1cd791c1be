import { describe, expect, it } from "vitest";
import { useEmbeddedStore } from "../../../test/support/aws";
import type { DynamoStore } from ".";

let store: DynamoStore;
useEmbeddedStore((s) => {
	store = s;
});

describe("per-repo guardrails against dynalite", () => {
	it("keeps the newest five of a repo, newest first, apart from other repos and runs", async () => {
		for (let i = 1; i <= 7; i++)
			await store.addGuardrail("api", {
				at: `2026-01-0${i}T00:00:00Z`,
				runId: `R${i}`,
				failure: "validation",
				summary: `lint failed #${i}`,
			});
		await store.addGuardrail("web", {
			at: "2026-01-01T00:00:00Z",
			runId: "W1",
			failure: "gate",
			summary: "no commit",
		});
		const api = await store.guardrails("api", 10);
		expect(api.map((g) => g.summary)).toEqual([7, 6, 5, 4, 3].map((i) => `lint failed #${i}`));
		expect(api[0]).toEqual({
			at: "2026-01-07T00:00:00Z",
			runId: "R7",
			failure: "validation",
			summary: "lint failed #7",
		});
		expect((await store.guardrails("web")).map((g) => g.runId)).toEqual(["W1"]);
		expect(await store.guardrails("none")).toEqual([]);
		// Guardrails are not runs: the run listing does not see them.
		expect((await store.listRuns({ limit: 50 })).items).toEqual([]);
	});
});
