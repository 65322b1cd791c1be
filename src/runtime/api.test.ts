import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GitHubDouble, startGitHubDouble } from "../../test/doubles/github/server";
import { type LinearDouble, startLinearDouble } from "../../test/doubles/linear/server";
import { startTrelloDouble, type TrelloDouble } from "../../test/doubles/trello/server";
import { readSettings } from "../config/settings";
import { NotConfigured } from "../integrations/tracker";
import { selfActors } from "./api";

let linear: LinearDouble;
let github: GitHubDouble;
let trello: TrelloDouble;
beforeAll(async () => {
	[linear, github, trello] = await Promise.all([
		startLinearDouble(),
		startGitHubDouble(),
		startTrelloDouble(),
	]);
});
afterAll(() => Promise.all([linear.stop(), github.stop(), trello.stop()]));

const configured = () =>
	readSettings({
		LINEAR_API_KEY: linear.apiKey,
		LINEAR_API_URL: linear.url,
		GITHUB_TOKEN: github.token,
		GITHUB_API_URL: github.url,
		TRELLO_API_KEY: trello.apiKey,
		TRELLO_TOKEN: trello.token,
		TRELLO_API_URL: trello.url,
	});

describe("the API's lookup of Lisa's own actor", () => {
	it("asks each tracker once, and again after a failure", async () => {
		const self = selfActors(configured());
		linear.failNext(1, { status: 500 });
		await expect(self("linear")).rejects.toMatchObject({ name: "TrackerError" });
		const asked = linear.requests.length;
		expect(await self("linear")).toBe(linear.state.viewer.id);
		expect(await self("linear")).toBe(linear.state.viewer.id);
		expect(linear.requests.length).toBe(asked + 1);

		expect(await self("github")).toBe(github.login);
		expect(await self("trello")).toBe(trello.me.id);
		const calls = github.requests.length;
		expect(await self("github")).toBe(github.login);
		expect(github.requests.length).toBe(calls);
	});

	it("takes GITHUB_BOT_LOGIN as GitHub's answer without asking", async () => {
		const self = selfActors({
			...configured(),
			github: { token: github.token, apiUrl: github.url, botLogin: "lisa-app[bot]" },
		});
		const calls = github.requests.length;
		expect(await self("github")).toBe("lisa-app[bot]");
		expect(github.requests.length).toBe(calls);
	});

	it("rejects with NotConfigured when the source has no credentials", async () => {
		const self = selfActors(readSettings({ GITHUB_BOT_LOGIN: "lisa-app[bot]" }));
		for (const source of ["linear", "trello", "github"] as const)
			await expect(self(source)).rejects.toBeInstanceOf(NotConfigured);
	});
});
