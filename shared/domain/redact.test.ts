import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { redact, StreamRedactor, tail } from "./redact";

describe("redact", () => {
	it.each([
		["a Linear webhook secret (lin_wh_)", `lin_wh_${"a1B2".repeat(8)}`],
		["a Linear webhook signing secret (lin_whs_)", `lin_whs_${"a1B2".repeat(8)}`],
		["a Linear API key", `lin_api_${"a1B2".repeat(8)}`],
		["a Lisa API token", `lisa_${randomBytes(24).toString("base64url")}`],
		["a Trello token", `ATTA${"0a1b2c3d".repeat(9)}`],
		["a GitHub token", `ghs_${"a1B2".repeat(9)}`],
	])("hides %s", (_name, secret) => {
		const out = redact(`token ${secret} in the output`);
		expect(out).toBe("token [redacted] in the output");
	});

	it("leaves snake_case names that only start like a Lisa token", () => {
		const text = "lisa_agent_configuration_loader_for_tests_and_more ran";
		expect(redact(text)).toBe(text);
	});
});

describe("tail", () => {
	it("cut inside a line, drops the word it cut through (a piece of a secret)", () => {
		const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
		const text = `${"x".repeat(50)} ${secret} ${"y".repeat(80)}`;
		// 100 characters keep the last 19 of the secret, too short to be recognised on their own.
		const cut = tail(text, 100);
		expect(cut).toBe(`… ${"y".repeat(80)}`);
		expect(redact(tail(text, 100))).not.toContain(secret.slice(-10));
		// A cut on a word boundary keeps everything.
		expect(tail("aaa bbb ccc", 7)).toBe("bbb ccc");
		expect(tail("short", 10)).toBe("short");
	});
});

describe("StreamRedactor", () => {
	const secret = "custom-secret-value-0123456789";
	const show = (chunks: string[], secrets = [secret]) => {
		const r = new StreamRedactor(secrets);
		const pieces = chunks.map((c) => r.push(c));
		pieces.push(r.end());
		return pieces;
	};

	it("holds an unfinished line back, so a secret split between pieces is still one", () => {
		const pieces = show(["first line\nthe key is custom-secr", "et-value-0123456789 ok\nlast"]);
		expect(pieces).toEqual(["first line\n", "the key is [redacted] ok\n", "last"]);
		// A token recognised by its shape, split the same way.
		const gh = `ghp_${"Ab1".repeat(10)}`;
		expect(show([`push ${gh.slice(0, 9)}`, `${gh.slice(9)}\n`], []).join("")).toBe(
			"push [redacted]\n",
		);
		// Bearer and its token in different pieces.
		expect(show(["Authorization: Bearer ", "abcdefghijklmnopqrstuvwxyz\n"], []).join("")).toBe(
			"Authorization: [redacted]\n",
		);
	});

	it("does not hold a line forever: past the limit it cuts after a space", () => {
		const r = new StreamRedactor([], 20);
		expect(r.push("aaaaaaaaaa bbbbbbbbbbbbbbbbbbbb cc")).toBe("aaaaaaaaaa bbbbbbbbbbbbbbbbbbbb ");
		expect(r.end()).toBe("cc");
	});

	it("keeps a private key redacted to its END line across pieces", () => {
		const pieces = show([
			"before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n",
			"AAAAsecondhalf\nBBBB\n",
			"-----END RSA PRIVATE KEY-----\nafter\n",
		]);
		expect(pieces.join("")).toBe("before\n[redacted][redacted][redacted]\nafter\n");
		expect(pieces.join("")).not.toMatch(/MIIE|AAAA|BBBB/);
	});
});
