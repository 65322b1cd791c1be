import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LinearDouble, startLinearDouble } from "../../../test/doubles/linear/server";
import { linearViewerId } from "./actor";

let linear: LinearDouble;
beforeAll(async () => {
	linear = await startLinearDouble();
});
afterAll(() => linear.stop());

describe("Lisa's own Linear user (one GraphQL request, no SDK)", () => {
	it("is the viewer of the API key", async () => {
		expect(await linearViewerId(linear.apiKey, linear.url)).toBe(linear.state.viewer.id);
		expect(linear.requests.at(-1)?.operationName).toBe("LisaViewer");
	});

	it("reports a refused key as permanent, rate limits, server errors and no answer as transient", async () => {
		const refused = await linearViewerId("lin_api_wrong", linear.url).catch((e) => e);
		expect(refused).toMatchObject({ name: "TrackerError", transient: false });
		expect(refused.message).toMatch(/HTTP 400 Authentication required/);
		for (const [status, type] of [
			[429, undefined],
			[400, "ratelimited"],
			[500, undefined],
			[502, undefined],
			[408, undefined],
		] as const) {
			linear.failNext(1, { status, ...(type ? { type } : {}) });
			const err = await linearViewerId(linear.apiKey, linear.url).catch((e) => e);
			expect({ status, err }).toMatchObject({ status, err: { transient: true } });
		}
		linear.failNext(1, { status: 403 });
		expect(await linearViewerId(linear.apiKey, linear.url).catch((e) => e)).toMatchObject({
			transient: false,
		});
		const down = await linearViewerId(linear.apiKey, "http://127.0.0.1:9/graphql").catch((e) => e);
		expect(down).toMatchObject({ name: "TrackerError", transient: true });
	});

	it("sends the key only over HTTPS or to this machine", async () => {
		const before = linear.requests.length;
		const err = await linearViewerId(linear.apiKey, "http://linear.example/graphql").catch(
			(e) => e,
		);
		expect(err).toMatchObject({ name: "TrackerError", transient: false });
		expect(err.message).toMatch(/not HTTPS/);
		expect(linear.requests.length).toBe(before);
	});
});
