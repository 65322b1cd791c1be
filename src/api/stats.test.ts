import { describe, expect, it } from "vitest";
import { defaultSince, planWindow } from "./stats";

const NOW = "2026-11-24T15:30:00.000Z";

describe("the stats' window", () => {
	it("defaults to 30 whole UTC days, today's included, all read from the days kept", () => {
		expect(defaultSince(NOW)).toBe("2026-10-26T00:00:00.000Z");
		const plan = planWindow(defaultSince(NOW), NOW, NOW);
		expect(plan.days).toHaveLength(30);
		expect(plan.days[0]).toBe("2026-10-26");
		expect(plan.days.at(-1)).toBe("2026-11-24");
		expect(plan.recount).toEqual([]);
	});

	it("recounts a part day at either edge from its runs", () => {
		expect(planWindow("2026-11-01T12:00:00.000Z", "2026-11-04T06:00:00.000Z", NOW)).toEqual({
			days: ["2026-11-02", "2026-11-03"],
			recount: [
				{ since: "2026-11-01T12:00:00.000Z", until: "2026-11-02T00:00:00.000Z" },
				{ since: "2026-11-04T00:00:00.000Z", until: "2026-11-04T06:00:00.000Z" },
			],
		});
		expect(planWindow("2026-11-01T00:00:00.000Z", "2026-11-03T00:00:00.000Z", NOW)).toEqual({
			days: ["2026-11-01", "2026-11-02"],
			recount: [],
		});
	});

	it("recounts a window within one day; takes today whole once the window reaches now", () => {
		expect(planWindow("2026-11-01T08:00:00.000Z", "2026-11-01T09:00:00.000Z", NOW)).toEqual({
			days: [],
			recount: [{ since: "2026-11-01T08:00:00.000Z", until: "2026-11-01T09:00:00.000Z" }],
		});
		expect(planWindow("2026-11-24T00:00:00.000Z", "2026-12-01T00:00:00.000Z", NOW)).toEqual({
			days: ["2026-11-24"],
			recount: [],
		});
		expect(planWindow("2026-11-24T08:00:00.000Z", NOW, NOW)).toEqual({
			days: [],
			recount: [{ since: "2026-11-24T08:00:00.000Z", until: "2026-11-25T00:00:00.000Z" }],
		});
		expect(planWindow("2026-12-02T00:00:00.000Z", "2026-12-03T00:00:00.000Z", NOW)).toEqual({
			days: [],
			recount: [],
		});
	});
});
