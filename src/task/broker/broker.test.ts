import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Broker, type Refusal, type Upstream } from "./broker";

// The broker against a hostile client and an upstream that misbehaves: what it forwards, what it
// refuses, and that the real key never leaves it except upstream.

const KEY = "sk-ant-api03-real-key-0123456789abcdefghijklmnop";
const STREAM = [
	'event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":10,"output_tokens":1}}}\n\n',
	'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":7}}\n\n',
];

interface Seen {
	url: string;
	headers: IncomingMessage["headers"];
	body: string;
}
let seen: Seen[] = [];
let upstream: { url: string; close(): void };
let broker: Broker;

beforeAll(async () => {
	// An upstream that streams an answer, or, asked for it, quotes the key it got in an error (as
	// some APIs quote part of a bad key).
	const server = createServer(async (req, res) => {
		let body = "";
		for await (const c of req) body += c;
		seen.push({ url: req.url ?? "", headers: req.headers, body });
		if (body.includes("endless")) {
			// Starts an answer and never ends it.
			res.writeHead(200, { "content-type": "text/event-stream" });
			res.write(STREAM[0]);
			return;
		}
		if (body.includes("no-usage")) {
			res.writeHead(200, { "content-type": "text/event-stream" });
			res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n');
			return;
		}
		if (body.includes("quote-the-key")) {
			res.writeHead(401, { "content-type": "application/json" });
			res.end(
				JSON.stringify({
					error: { message: `Incorrect API key provided: ${req.headers["x-api-key"]}` },
				}),
			);
			return;
		}
		res.writeHead(200, { "content-type": "text/event-stream" });
		const pause = body.includes("slow") ? 300 : 20;
		for (const part of STREAM) {
			res.write(part);
			await new Promise((r) => setTimeout(r, pause));
		}
		res.end();
	});
	await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
	upstream = {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		close: () => server.close(),
	};
	broker = await Broker.start();
});
afterAll(async () => {
	await broker?.close();
	upstream?.close();
});
beforeEach(() => {
	seen = [];
});

const anthropic = (): Upstream => ({
	api: "anthropic",
	base: upstream.url,
	key: KEY,
	header: "x-api-key",
});

function post(
	url: string,
	key: string | undefined,
	body: unknown,
	headers: Record<string, string> = {},
	signal?: AbortSignal,
) {
	return fetch(url, {
		method: "POST",
		signal,
		headers: {
			"content-type": "application/json",
			...(key ? { "x-api-key": key } : {}),
			...headers,
		},
		body: JSON.stringify(body),
	});
}
const message = (extra: Record<string, unknown> = {}) => ({
	model: "m",
	stream: true,
	max_tokens: 5,
	messages: [],
	...extra,
});

describe("the model broker", () => {
	it("passes a stream through unchanged, with the real key upstream and the count of its answer", async () => {
		const usage: unknown[] = [];
		const lease = broker.lease({
			upstreams: [anthropic()],
			allows: () => true,
			onUsage: (u) => usage.push(u),
		});
		const res = await post(`${lease.url(0)}/v1/messages?beta=true`, lease.key, message(), {
			"anthropic-version": "2023-06-01",
		});
		expect(res.status).toBe(200);
		expect(await res.text()).toBe(STREAM.join(""));
		expect(seen).toHaveLength(1);
		expect(seen[0]?.url).toBe("/v1/messages?beta=true");
		expect(seen[0]?.headers["x-api-key"]).toBe(KEY);
		expect(seen[0]?.headers["anthropic-version"]).toBe("2023-06-01");
		expect(JSON.parse(seen[0]?.body ?? "")).toEqual(message());
		const counted = { inputTokens: 10, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 };
		expect(lease.usage()).toEqual({ usage: counted, servedModel: "m", requests: 1 });
		expect(usage).toEqual([counted]);
		await lease.close();
	});

	it("refuses a key that is not the lease's, a lease that ended, a path or a model not the run's: nothing goes upstream", async () => {
		const refused: Refusal[] = [];
		const lease = broker.lease({
			upstreams: [anthropic()],
			allows: (m) => m === "m",
			onRefused: (r) => refused.push(r),
		});
		const other = broker.lease({ upstreams: [anthropic()], allows: () => true });
		const url = `${lease.url(0)}/v1/messages`;
		const answers = [
			await post(url, undefined, message()),
			await post(url, other.key, message()),
			await post(url, `${lease.key}x`, message()),
			await post(url, KEY, message()),
			await post(`${lease.url(0)}/v1/models`, lease.key, message()),
			await post(`${lease.url(0)}/v1/messages/batches`, lease.key, message()),
			await fetch(url, { headers: { "x-api-key": lease.key } }),
			await post(url, lease.key, message({ model: "dearer" })),
			await post(url, lease.key, message({ model: undefined })),
			await post(url, lease.key, ["not", "an", "object"]),
			await post(`${lease.url(1)}/v1/messages`, lease.key, message()),
		];
		expect(answers.map((a) => a.status)).toEqual([
			401, 401, 401, 401, 404, 404, 404, 403, 403, 400, 404,
		]);
		for (const a of answers) expect(await a.text()).not.toContain(KEY);
		expect(refused.map((r) => r.status)).toEqual([
			401, 401, 401, 401, 404, 404, 404, 403, 403, 400,
		]);
		expect(refused[7]).toEqual({
			status: 403,
			reason: "the model dearer is not one this step may use",
			path: "/v1/messages",
			model: "dearer",
		});
		await lease.close();
		const after = await post(url, lease.key, message());
		expect(after.status).toBe(404);
		expect(seen).toEqual([]);
		await other.close();
	});

	it("asks its gate before each request, and refuses once it says so", async () => {
		let spent = false;
		const refused: Refusal[] = [];
		const lease = broker.lease({
			upstreams: [anthropic()],
			allows: () => true,
			gate: (usage) => (spent || usage.outputTokens > 0 ? "the run's budget is spent" : undefined),
			onRefused: (r) => refused.push(r),
		});
		const first = await post(`${lease.url(0)}/v1/messages`, lease.key, message());
		await first.text();
		const second = await post(`${lease.url(0)}/v1/messages`, lease.key, message());
		spent = true;
		expect([first.status, second.status]).toEqual([200, 403]);
		expect(await second.json()).toEqual({
			type: "error",
			error: {
				type: "permission_error",
				message: "Lisa's model broker refused this request: the run's budget is spent",
			},
		});
		expect(seen).toHaveLength(1);
		expect(refused.map((r) => r.reason)).toEqual(["the run's budget is spent"]);
		await lease.close();
	});

	it("redacts the key from an error that quotes it, and from a failure to connect", async () => {
		const lease = broker.lease({ upstreams: [anthropic()], allows: () => true });
		const res = await post(
			`${lease.url(0)}/v1/messages`,
			lease.key,
			message({ system: "quote-the-key" }),
		);
		expect(res.status).toBe(401);
		const text = await res.text();
		expect(seen[0]?.headers["x-api-key"]).toBe(KEY);
		expect(text).toContain("Incorrect API key provided");
		expect(text).not.toContain(KEY);
		await lease.close();

		const gone = broker.lease({
			upstreams: [{ ...anthropic(), base: `http://${KEY}@127.0.0.1:9` }],
			allows: () => true,
		});
		const failed = await post(`${gone.url(0)}/v1/messages`, gone.key, message());
		expect(failed.status).toBe(502);
		expect(await failed.text()).not.toContain(KEY);
		await gone.close();
	});

	it("takes Gemini's key from the query as its SDK sends it, and sends the real one as a header only", async () => {
		const lease = broker.lease({
			upstreams: [{ api: "gemini", base: upstream.url, key: KEY, header: "x-goog-api-key" }],
			allows: (m) => m === "gemini-2.5-pro",
		});
		const res = await post(
			`${lease.url(0)}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${lease.key}`,
			undefined,
			{ contents: [] },
		);
		expect(res.status).toBe(200);
		await res.text();
		expect(seen[0]?.url).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
		expect(seen[0]?.headers["x-goog-api-key"]).toBe(KEY);
		const other = await fetch(`${lease.url(0)}/v1beta/models/gemini-3-ultra:generateContent`, {
			method: "POST",
			headers: { "x-goog-api-key": lease.key },
			body: "{}",
		});
		// Refused in Google's error format, as the CLI reads it.
		expect(other.status).toBe(403);
		expect(await other.json()).toEqual({
			error: {
				code: 403,
				status: "PERMISSION_DENIED",
				message:
					"Lisa's model broker refused this request: the model gemini-3-ultra is not one this step may use",
			},
		});
		expect(seen).toHaveLength(1);
		await lease.close();
	});

	it("asks a streamed chat completion for its usage, so that it is counted", async () => {
		const lease = broker.lease({
			upstreams: [{ api: "chat", base: `${upstream.url}/v1`, key: KEY, header: "bearer" }],
			allows: () => true,
		});
		const res = await fetch(`${lease.url(0)}/chat/completions`, {
			method: "POST",
			headers: { authorization: `Bearer ${lease.key}`, "content-type": "application/json" },
			body: JSON.stringify({
				model: "m",
				stream: true,
				stream_options: { other: 1 },
				messages: [],
			}),
		});
		await res.text();
		expect(seen[0]?.url).toBe("/v1/chat/completions");
		expect(seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
		expect(JSON.parse(seen[0]?.body ?? "").stream_options).toEqual({
			other: 1,
			include_usage: true,
		});
		await lease.close();
	});

	it("counts an answer the agent hung up on, read to its end, and one the lease cut, up to the cut", async () => {
		const lease = broker.lease({ upstreams: [anthropic()], allows: () => true });
		const cut = new AbortController();
		const res = await post(
			`${lease.url(0)}/v1/messages`,
			lease.key,
			message({ system: "slow" }),
			{},
			cut.signal,
		);
		const reader = res.body?.getReader();
		await reader?.read();
		cut.abort();
		await new Promise((r) => setTimeout(r, 800));
		expect(lease.usage()).toMatchObject({
			requests: 1,
			usage: { inputTokens: 10, outputTokens: 7 },
		});

		const endless = await post(
			`${lease.url(0)}/v1/messages`,
			lease.key,
			message({ system: "endless" }),
		);
		await endless.body?.getReader().read();
		await lease.close();
		expect(lease.usage()).toMatchObject({
			requests: 2,
			usage: { inputTokens: 20, outputTokens: 8 },
		});
	});

	it("forwards no query or header that could trim the usage report or bill elsewhere, and counts an answer without one by its size", async () => {
		const lease = broker.lease({ upstreams: [anthropic()], allows: () => true });
		const body = message({ system: "no-usage", padding: "x".repeat(4000) });
		const res = await post(
			`${lease.url(0)}/v1/messages?beta=true&fields=id&$alt=json`,
			lease.key,
			body,
			{
				"x-goog-fieldmask": "id",
				"openai-organization": "org-other",
				"x-goog-user-project": "someone-else",
			},
		);
		await res.text();
		expect(seen[0]?.url).toBe("/v1/messages?beta=true");
		for (const h of ["x-goog-fieldmask", "openai-organization", "x-goog-user-project"])
			expect(seen[0]?.headers[h]).toBeUndefined();
		expect(lease.usage().usage.inputTokens).toBe(Math.ceil(JSON.stringify(body).length / 4));
		await lease.close();
	});

	it("lets a lease run a few requests at once, not more, and its gate counts those still coming", async () => {
		let asked = 0;
		const lease = broker.lease({
			upstreams: [anthropic()],
			allows: () => true,
			gate: (usage) => {
				asked++;
				return asked > 1 && usage.inputTokens === 0
					? "the gate did not see the running request"
					: undefined;
			},
		});
		const first = await post(
			`${lease.url(0)}/v1/messages`,
			lease.key,
			message({ system: "endless" }),
		);
		await first.body?.getReader().read();
		const rest = await Promise.all(
			Array.from({ length: 8 }, () =>
				post(`${lease.url(0)}/v1/messages`, lease.key, message({ system: "endless" })),
			),
		);
		const statuses = rest.map((r) => r.status).sort();
		expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 429]);
		await lease.close();
	});
});
