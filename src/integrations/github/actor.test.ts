import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubDouble, startGitHubDouble } from "../../../test/doubles/github/server";
import { gitHubLogin } from "./actor";

let github: GitHubDouble;
beforeAll(async () => {
	github = await startGitHubDouble();
});
afterAll(() => github.stop());

describe("Lisa's own GitHub login (GET /user, no octokit)", () => {
	it("is the token's user", async () => {
		expect(await gitHubLogin(github.token, github.url)).toBe(github.login);
		expect(github.requests.at(-1)).toMatchObject({ method: "GET", path: "/user", status: 200 });
	});

	it("is unknown when GitHub will not say: a bad token, or an App's installation token", async () => {
		expect(await gitHubLogin("ghp_wrong", github.url)).toBeUndefined();
		for (const status of [403, 404]) {
			github.failNext(1, { status });
			expect(await gitHubLogin(github.token, github.url)).toBeUndefined();
		}
	});

	it("fails transiently on 408, 429, 5xx and no answer, permanently otherwise", async () => {
		for (const status of [408, 429, 500, 503]) {
			github.failNext(1, { status });
			const err = await gitHubLogin(github.token, github.url).catch((e) => e);
			expect({ status, err }).toMatchObject({ status, err: { transient: true } });
		}
		github.failNext(1, { status: 422 });
		const err = await gitHubLogin(github.token, github.url).catch((e) => e);
		expect(err).toMatchObject({ name: "TrackerError", transient: false });
		expect(err.message).toMatch(/HTTP 422/);
		const down = await gitHubLogin(github.token, "http://127.0.0.1:9").catch((e) => e);
		expect(down).toMatchObject({ name: "TrackerError", transient: true });
	});
});
