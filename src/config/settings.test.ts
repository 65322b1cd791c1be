import { describe, expect, it } from "vitest";
import type { AgentLink } from "./links";
import { readSettings, withLinks } from "./settings";

const link = (name: string, value: unknown) => ({
	[`SST_RESOURCE_${name}`]: JSON.stringify(value),
});

const agent: AgentLink = {
	cluster: "arn:aws:ecs:eu-west-1:123456789012:cluster/lisa-prod-Cluster",
	taskDefinition: "arn:aws:ecs:eu-west-1:123456789012:task-definition/lisa-prod-Agent:3",
	container: "Agent",
	subnets: ["subnet-a", "subnet-b"],
	securityGroups: ["sg-1"],
	assignPublicIp: true,
	capacity: "spot",
};

/** What SST gives a function linked to everything (src/config/links.ts names the resources). */
const linked = {
	...link("App", { name: "lisa", stage: "prod" }),
	...link("Table", { name: "lisa-prod-RunsTable-abc" }),
	...link("IntakeQueue", { url: "https://sqs.eu-west-1.amazonaws.com/1/lisa-prod-Intake" }),
	...link("EventsQueue", { url: "https://sqs.eu-west-1.amazonaws.com/1/lisa-prod-Events" }),
	...link("AgentTask", agent),
	...link("ApiToken", { value: "lisa_token_from_sst_secret" }),
	...link("LinearApiKey", { value: "lin_api_from_sst_secret" }),
	...link("LinearWebhookSecret", { value: "lin_whs_from_sst_secret" }),
	...link("GithubToken", { value: "ghp_from_sst_secret" }),
	// An optional secret nobody set: its placeholder is empty.
	...link("TrelloApiKey", { value: "" }),
};

describe("settings", () => {
	it("reads the environment when nothing is linked (npm start, the task)", () => {
		const s = readSettings({
			LISA_TABLE_NAME: "lisa-local",
			LISA_EVENTS_QUEUE_URL: "http://127.0.0.1:1/events",
			LINEAR_API_KEY: "lin_env",
			LISA_ECS_CLUSTER: "c",
			LISA_ECS_TASK_DEFINITION: "td",
			LISA_ECS_SUBNETS: "s1, s2",
		});
		expect(s.tableName).toBe("lisa-local");
		expect(s.eventsQueueUrl).toBe("http://127.0.0.1:1/events");
		expect(s.linear.apiKey).toBe("lin_env");
		expect(s.launcher).toBe("local");
		expect(s.ecs).toEqual({
			cluster: "c",
			taskDefinition: "td",
			container: "agent",
			subnets: ["s1", "s2"],
			securityGroups: [],
			assignPublicIp: true,
			capacity: "fargate",
		});
	});

	it("reads linked SST resources and secrets as the same settings", () => {
		const s = readSettings({ ...linked, AWS_REGION: "eu-west-1" });
		expect(s.tableName).toBe("lisa-prod-RunsTable-abc");
		expect(s.intakeQueueUrl).toBe("https://sqs.eu-west-1.amazonaws.com/1/lisa-prod-Intake");
		expect(s.eventsQueueUrl).toBe("https://sqs.eu-west-1.amazonaws.com/1/lisa-prod-Events");
		expect(s.apiToken).toBe("lisa_token_from_sst_secret");
		expect(s.linear).toMatchObject({
			apiKey: "lin_api_from_sst_secret",
			webhookSecret: "lin_whs_from_sst_secret",
		});
		expect(s.github.token).toBe("ghp_from_sst_secret");
		expect(s.trello.apiKey).toBeUndefined();
		expect(s.launcher).toBe("ecs");
		expect(s.ecs).toEqual(agent);
	});

	it("prefers a linked value over the environment, and the environment over an empty secret", () => {
		const s = readSettings({
			...linked,
			LISA_TABLE_NAME: "stale-from-env",
			TRELLO_API_KEY: "trello_from_env",
		});
		expect(s.tableName).toBe("lisa-prod-RunsTable-abc");
		expect(s.trello.apiKey).toBe("trello_from_env");
	});

	it("hands linked secrets to whoever needs them as variables (the logger redacts those)", () => {
		const env = withLinks(linked);
		expect(env.LINEAR_API_KEY).toBe("lin_api_from_sst_secret");
		expect(env.LISA_API_TOKEN).toBe("lisa_token_from_sst_secret");
		expect(env.LISA_ECS_SUBNETS).toBe("subnet-a,subnet-b");
		expect(env.TRELLO_API_KEY).toBeUndefined();
	});
});

describe("the local defaults", () => {
	it("treats an empty variable as unset (PORT= stays 8787, not a random port)", () => {
		expect(readSettings({ PORT: "" }).port).toBe(8787);
		expect(readSettings({}).port).toBe(8787);
		expect(readSettings({ PORT: "0" }).port).toBe(0);
		expect(() => readSettings({ PORT: "http" })).toThrow(/PORT must be a port number/);
	});
});

describe("LISA_LAUNCHER", () => {
	it("selects the child process (default), the container or ECS, and refuses anything else", () => {
		expect(readSettings({}).launcher).toBe("local");
		expect(readSettings({ LISA_LAUNCHER: "container" }).launcher).toBe("container");
		expect(readSettings({ LISA_LAUNCHER: " ecs " }).launcher).toBe("ecs");
		expect(() => readSettings({ LISA_LAUNCHER: "docker" })).toThrow(
			'LISA_LAUNCHER must be "local", "container" or "ecs", not "docker"',
		);
	});
});

describe("a GitHub App (GITHUB_APP_*)", () => {
	const PEM = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----";

	it("takes all three, with a key whose line breaks a .env file wrote as \\n", () => {
		const app = {
			GITHUB_APP_ID: "4242",
			GITHUB_APP_PRIVATE_KEY: PEM.replaceAll("\n", "\\n"),
			GITHUB_APP_INSTALLATION_ID: "77",
		};
		expect(readSettings(app).github.app).toEqual({
			appId: "4242",
			privateKey: PEM,
			installationId: 77,
		});
		expect(readSettings({}).github.app).toBeUndefined();
	});

	it("refuses a part of one, saying what it needs", () => {
		for (const env of [
			{ GITHUB_APP_ID: "4242" },
			{ GITHUB_APP_ID: "4242", GITHUB_APP_PRIVATE_KEY: PEM, GITHUB_APP_INSTALLATION_ID: "acme" },
		])
			expect(() => readSettings(env)).toThrow(
				/a GitHub App needs GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY .* and GITHUB_APP_INSTALLATION_ID/,
			);
	});
});
