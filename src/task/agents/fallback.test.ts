import { describe, expect, it } from "vitest";
import { isTransientFailure, isTransientStatus, TRANSIENT_PATTERNS } from "../../domain/transient";
import { type AgentRunFacts, exhaustedError, failureVerdict } from "./fallback";

describe("transient failures, pattern by pattern (the original Lisa CLI's list)", () => {
	// One vector per pattern; the table must cover every pattern in the list.
	const vectors: Record<string, string> = {
		"/429/i": "HTTP 429",
		"/quota/i": "You exceeded your current quota",
		"/rate.?limit/i": "rate_limit_error",
		"/too many requests/i": "429 Too Many Requests",
		"/resource.?exhausted/i": "RESOURCE_EXHAUSTED: try later",
		"/overloaded/i": "overloaded_error: Overloaded",
		"/unavailable/i": "503 Service Unavailable",
		"/not.?found.*model/i": "not found: the requested model",
		"/model.*not.?found/i": "model claude-x not found",
		"/does not exist/i": "The model `gpt-9` does not exist",
		"/ETIMEDOUT/": "connect ETIMEDOUT 1.2.3.4:443",
		"/ECONNREFUSED/": "connect ECONNREFUSED 127.0.0.1:443",
		"/ECONNRESET/": "read ECONNRESET",
		"/ENOTFOUND/": "getaddrinfo ENOTFOUND api.anthropic.com",
		"/timeout/i": "Request timeout",
		"/timed?\\s*out/i": "the request timed out",
		"/network.?error/i": "NetworkError when attempting to fetch",
		"/not installed/i": "gemini is not installed",
		"/not in PATH/i": "codex not in PATH",
		"/command not found/i": "sh: opencode: command not found",
		"/lisa-overseer/i": "[lisa-overseer] Provider killed",
		"/lisa-supervisor/i": "[lisa-supervisor] the agent was killed as stuck",
	};

	it("has a vector for every pattern", () => {
		expect(Object.keys(vectors).sort()).toEqual(TRANSIENT_PATTERNS.map(String).sort());
	});

	it.each(TRANSIENT_PATTERNS.map((re) => [String(re), re] as const))("%s", (name, re) => {
		const vector = vectors[name] as string;
		expect(re.test(vector)).toBe(true);
		expect(isTransientFailure(`some output\n${vector}\nmore output`)).toBe(true);
	});

	it.each([
		"SyntaxError: Unexpected token",
		"TypeError: Cannot read properties",
		"Implementation complete",
		"Build failed with errors",
		"Error: permission denied",
	])("%s is not transient", (s) => {
		expect(isTransientFailure(s)).toBe(false);
	});

	it("treats HTTP 408, 429 and 5xx as transient, other 4xx not", () => {
		expect([400, 401, 403, 404, 408, 422, 429, 500, 502, 503].filter(isTransientStatus)).toEqual([
			408, 429, 500, 502, 503,
		]);
	});
});

describe("fallback chain decisions", () => {
	it("goes on after a transient failure and stops with the reason otherwise", () => {
		const fail = (output: string, extra = {}) =>
			failureVerdict("claude", { ok: false, exitCode: 1, stuck: false, output, ...extra }, 240);
		expect(fail("Error: 429 Too Many Requests")).toEqual({
			transient: true,
			reason: "claude exited with code 1: Error: 429 Too Many Requests",
		});
		expect(fail("SyntaxError: Unexpected token")).toMatchObject({ transient: false });
		// The provider's own verdict (HTTP status) beats the output patterns.
		expect(
			fail("HTTP 400 Bad Request: timeout parameter invalid", { transient: false }),
		).toMatchObject({ transient: false });
		expect(fail("HTTP 503", { transient: true })).toMatchObject({ transient: true });
		expect(fail("", { stuck: true, exitCode: null })).toEqual({
			transient: true,
			reason: "claude produced no output for 240 s and was killed as stuck",
		});
		expect(fail("x", { exitCode: null }).reason).toBe("claude was killed: x");
		expect(fail("x", { exitCode: null, signal: "SIGTERM" })).toEqual({
			transient: false,
			reason: "claude was killed by SIGTERM: x",
		});
	});

	it("takes an agent killed outright (out of memory) as transient: another try may succeed", () => {
		const fail = (extra: Partial<AgentRunFacts>) =>
			failureVerdict(
				"claude",
				{ ok: false, exitCode: null, stuck: false, output: "working", ...extra },
				240,
			);
		expect(fail({ exitCode: null, signal: "SIGKILL" })).toEqual({
			transient: true,
			reason: "claude was killed by SIGKILL (out of memory?): working",
		});
		// What a shell reports for a child it lost to SIGKILL.
		expect(fail({ exitCode: 137 })).toMatchObject({ transient: true });
	});

	it("reports an exhausted chain with each model's reason", () => {
		expect(
			exhaustedError([
				{ spec: "claude", reason: "claude exited with code 1: 429", transient: true },
			]),
		).toBe("claude exited with code 1: 429");
		expect(
			exhaustedError([
				{ spec: "claude", reason: "rate limited", transient: true },
				{ spec: "gemini", reason: "gemini is not installed or not in PATH", transient: true },
			]),
		).toBe(
			"all models failed: 1. claude: rate limited; 2. gemini: gemini is not installed or not in PATH",
		);
	});
});
