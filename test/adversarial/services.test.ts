import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { ListQueuesCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSettings, type Settings } from "../../src/config/settings";
import { LocalLauncher } from "../../src/local/launcher";
import { type EmbeddedAws, ensureQueue, startEmbeddedAws } from "../../src/local/services";
import { createLogger } from "../../src/log";
import { awsClients } from "../../src/runtime/aws";

// The embedded AWS stand-ins check nobody by themselves. Anyone who could reach them — another
// host, or an agent on this one — could start a run for any issue or rewrite a run. They listen on
// loopback only and answer only requests signed with the access key the stack made.

let aws: EmbeddedAws;
let dir: string;
beforeAll(async () => {
	aws = await startEmbeddedAws();
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-services-"));
});
afterAll(async () => {
	await aws.stop();
	await rm(dir, { recursive: true, force: true });
});

const settings = (key?: string): Settings => ({
	...readSettings({ LISA_TABLE_NAME: "lisa" }),
	dynamoEndpoint: aws.dynamoEndpoint,
	sqsEndpoint: aws.sqsEndpoint,
	localAccessKey: key,
});

/** This machine's addresses that are not loopback: where another host would connect. */
const outward = Object.values(os.networkInterfaces())
	.flat()
	.filter((a) => a && !a.internal && a.family === "IPv4")
	.map((a) => a?.address as string);

const connects = (host: string, port: number) =>
	new Promise<boolean>((resolve) => {
		const socket = net.connect(port, host);
		socket.once("connect", () => {
			socket.destroy();
			resolve(true);
		});
		socket.once("error", () => resolve(false));
	});

describe("the embedded DynamoDB and SQS", () => {
	it.skipIf(!outward.length)(
		"cannot be reached from another host: they listen on loopback",
		async () => {
			for (const endpoint of [aws.dynamoEndpoint, aws.sqsEndpoint]) {
				const { hostname, port } = new URL(endpoint);
				expect(hostname).toBe("127.0.0.1");
				expect(await connects("127.0.0.1", Number(port))).toBe(true);
				for (const address of outward) expect(await connects(address, Number(port))).toBe(false);
			}
		},
	);

	it.each([
		["the credentials any local client used to send", "local"],
		["a made-up key", "LISA0000000000000000000000000000000000000000000000"],
	])("refuse a request signed with %s", async (_what, key) => {
		const forged = awsClients(settings(key));
		await expect(forged.dynamo.send(new ListTablesCommand({}))).rejects.toMatchObject({
			name: "UnrecognizedClientException",
		});
		await expect(forged.sqs.send(new ListQueuesCommand({}))).rejects.toMatchObject({
			name: "UnrecognizedClientException",
		});
		// Not even a message can be dropped in: a forged run request never reaches intake.
		const real = awsClients(settings(aws.accessKey));
		const intake = await ensureQueue(real.sqs, "lisa-intake", {
			visibilityTimeoutSeconds: 30,
			maxReceiveCount: 3,
		});
		await expect(
			forged.sqs.send(
				new SendMessageCommand({
					QueueUrl: intake.url,
					MessageBody: JSON.stringify({ type: "run.requested", source: "linear", issueId: "x" }),
				}),
			),
		).rejects.toMatchObject({ name: "UnrecognizedClientException" });
	});

	it("answer requests signed with the stack's key", async () => {
		const ok = awsClients(settings(aws.accessKey));
		expect((await ok.dynamo.send(new ListTablesCommand({}))).TableNames).toBeDefined();
		expect((await ok.sqs.send(new ListQueuesCommand({}))).$metadata.httpStatusCode).toBe(200);
	});
});

describe("the local launcher", () => {
	const launcher = () =>
		new LocalLauncher(
			{ ...settings(aws.accessKey), dataDir: path.join(dir, "data") },
			{},
			createLogger("lisa-services-test", { LOG_LEVEL: "silent" }),
			{ reach: { workspaces: path.join(dir, "data", "workspaces"), path: "/usr/bin:/bin" } },
		);

	it.each([
		{ runId: "../../../../tmp/lisa-escape", stepIndex: 0, attempt: 1 },
		{ runId: "01M85DYWV0G781DS8CRSEW2NZN/../..", stepIndex: 0, attempt: 1 },
		{ runId: "x".repeat(3000), stepIndex: 0, attempt: 1 },
		{ runId: "01M85DYWV0G781DS8CRSEW2NZN", stepIndex: -1, attempt: 1 },
		{ runId: "01M85DYWV0G781DS8CRSEW2NZN", stepIndex: 0, attempt: 0.5 },
	])("launches nothing for ids of the wrong shape: %o", async (req) => {
		await expect(launcher().launch({ ...req, repos: [] })).rejects.toThrow(/^invalid /);
		expect(existsSync("/tmp/lisa-escape")).toBe(false);
		expect(existsSync(path.join(dir, "data", "workspaces"))).toBe(false);
	});
});
