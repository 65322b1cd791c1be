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
		expect(resolveConnection({}, env)).toEqual({
			url: "http://127.0.0.1:8787",
			lookedAt: ["--token", "LISA_API_TOKEN", "LISA_READ_TOKEN", path.join(dir, "api-token")],
		});
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
	const lookedAt = ["--token", "LISA_API_TOKEN", "LISA_READ_TOKEN", "/d/api-token"];
	const conn = { url: "http://l", token: "lisa_secret", tokenFrom: "LISA_API_TOKEN", lookedAt };

	it("401 names where the token came from and what to set, never the token", () => {
		const said = { error: "invalid bearer token" };
		const err = refused(401, said, conn);
		expect(err.message).toBe(
			"Lisa at http://l refused the token in LISA_API_TOKEN (Lisa said: invalid bearer token): set LISA_API_TOKEN to the API token `npm start` printed",
		);
		expect(err.message).not.toContain("lisa_secret");
		expect(refused(401, said, { ...conn, tokenFrom: "--token" }).message).toBe(
			"Lisa at http://l refused the token given with --token (Lisa said: invalid bearer token): check it against the API token `npm start` printed, or its read token",
		);
		expect(refused(401, said, { ...conn, tokenFrom: "/d/api-token" }).message).toContain(
			"refused the token in /d/api-token (Lisa said: invalid bearer token): that file is the token of the stack started here; for another Lisa, set LISA_API_TOKEN",
		);
	});

	it("401 without a token says where it looked and what to set", () => {
		expect(
			refused(401, { error: "missing bearer token" }, { url: "http://l", lookedAt }).message,
		).toBe(
			"Lisa at http://l needs a token, and none was found (looked at --token, LISA_API_TOKEN, LISA_READ_TOKEN, /d/api-token): set LISA_API_TOKEN to the API token `npm start` printed (or LISA_READ_TOKEN to its read token)",
		);
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
