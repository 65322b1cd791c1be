import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { refused, resolveConnection, unreachable } from "./client";

const dir = mkdtempSync(path.join(os.tmpdir(), "lisa-client-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("where the CLI finds Lisa", () => {
	it("--url, LISA_URL, then the local port", () => {
		const env = { LISA_DATA_DIR: dir };
		expect(resolveConnection({}, env).url).toBe("http://127.0.0.1:8787");
		expect(resolveConnection({}, { ...env, PORT: "9000" }).url).toBe("http://127.0.0.1:9000");
		expect(resolveConnection({}, { ...env, LISA_URL: "https://lisa.example/" }).url).toBe(
			"https://lisa.example",
		);
		expect(
			resolveConnection({ url: "http://h:1" }, { ...env, LISA_URL: "https://lisa.example" }).url,
		).toBe("http://h:1");
	});

	it("the token: --token, LISA_API_TOKEN, LISA_READ_TOKEN, then the local token file", () => {
		const env = { LISA_DATA_DIR: dir };
		expect(resolveConnection({}, env).token).toBeUndefined();
		writeFileSync(path.join(dir, "api-token"), "lisa_from_file\n");
		expect(resolveConnection({}, env)).toMatchObject({
			token: "lisa_from_file",
			tokenFrom: path.join(dir, "api-token"),
		});
		expect(resolveConnection({}, { ...env, LISA_READ_TOKEN: "r" })).toMatchObject({
			token: "r",
			tokenFrom: "LISA_READ_TOKEN",
		});
		expect(
			resolveConnection({}, { ...env, LISA_READ_TOKEN: "r", LISA_API_TOKEN: "a" }),
		).toMatchObject({ token: "a", tokenFrom: "LISA_API_TOKEN" });
		expect(resolveConnection({ token: "t" }, { ...env, LISA_API_TOKEN: "a" })).toMatchObject({
			token: "t",
			tokenFrom: "--token",
		});
	});
});

describe("what the CLI says when the API refuses", () => {
	const conn = { url: "http://l", token: "lisa_secret", tokenFrom: "LISA_API_TOKEN" };

	it("401 names where the token came from, never the token", () => {
		const err = refused(401, { error: "invalid bearer token" }, conn);
		expect(err.message).toMatch(
			/^the token was refused \(token from LISA_API_TOKEN; Lisa said: invalid bearer token\)/,
		);
		expect(err.message).not.toContain("lisa_secret");
	});

	it("403 is the API's own message; 404 the caller's; others the status and message", () => {
		expect(refused(403, { error: "a read-only token cannot cancel runs" }, conn).message).toBe(
			"a read-only token cannot cancel runs",
		);
		expect(refused(404, { error: "run not found" }, conn, "no run X").message).toBe("no run X");
		expect(
			refused(400, { error: "invalid request", issues: ["limit: too big"] }, conn).message,
		).toBe("Lisa answered 400: invalid request; limit: too big");
	});

	it("a refused connection and a timeout", () => {
		const refusedConn = Object.assign(new TypeError("fetch failed"), {
			cause: { code: "ECONNREFUSED" },
		});
		expect(unreachable("http://l", refusedConn).message).toBe(
			"no Lisa at http://l: start one with `npm start` or pass --url",
		);
		const timeout = Object.assign(new Error("t"), { name: "TimeoutError" });
		expect(unreachable("http://l", timeout).message).toBe(
			"Lisa at http://l did not answer within 10 s",
		);
	});
});
