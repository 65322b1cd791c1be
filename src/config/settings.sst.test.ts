import { createCipheriv, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSettings, withLinks } from "./settings";

// In a Lambda function SST puts only SST_RESOURCE_App in the environment; the other links and the
// secrets are in an encrypted file bundled with the function (SST_KEY_FILE, key in SST_KEY), which
// SST's Resource decrypts. This file's process environment is set up like that function's.

let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-sst-"));
	const key = randomBytes(32);
	const links = {
		Table: { name: "lisa-prod-RunsTable-x1" },
		ApiToken: { value: "lisa_token_from_the_key_file" },
		LinearWebhookSecret: { value: "lin_whs_from_the_key_file" },
	};
	// SST's format: AES-256-GCM with a zero nonce, the tag appended to the ciphertext.
	const cipher = createCipheriv("aes-256-gcm", key, Buffer.alloc(12, 0));
	const sealed = Buffer.concat([
		cipher.update(JSON.stringify(links)),
		cipher.final(),
		cipher.getAuthTag(),
	]);
	const file = path.join(dir, "resource.enc");
	await writeFile(file, sealed);
	Object.assign(process.env, {
		SST_RESOURCE_App: JSON.stringify({ name: "lisa", stage: "prod" }),
		SST_KEY: key.toString("base64"),
		SST_KEY_FILE: file,
	});
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("settings in a deployed function", () => {
	it("reads links and secrets from SST's encrypted resource file", () => {
		const s = readSettings();
		expect(s.tableName).toBe("lisa-prod-RunsTable-x1");
		expect(s.apiToken).toBe("lisa_token_from_the_key_file");
		expect(s.linear.webhookSecret).toBe("lin_whs_from_the_key_file");
		expect(withLinks().LINEAR_WEBHOOK_SECRET).toBe("lin_whs_from_the_key_file");
	});
});
