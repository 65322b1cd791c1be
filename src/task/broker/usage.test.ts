import { describe, expect, it } from "vitest";
import { UsageReader } from "./usage";

// The broker's count of an answer, from the answer's own usage reports, streamed or whole.

const sse = (events: Record<string, unknown>[]) =>
	events.map((e) => `event: ${String(e.type ?? "")}\ndata: ${JSON.stringify(e)}\n\n`).join("");

/** Feeds `text` in pieces of `size` characters, as a network delivers it. */
function read(
	api: ConstructorParameters<typeof UsageReader>[0],
	streamed: boolean,
	text: string,
	size = 7,
) {
	const r = new UsageReader(api, streamed);
	for (let i = 0; i < text.length; i += size) r.push(text.slice(i, i + size));
	return r.read();
}

describe("UsageReader", () => {
	it("reads Anthropic's stream: the input at message_start, the output at the last message_delta", () => {
		const text = sse([
			{
				type: "message_start",
				message: {
					model: "claude-sonnet-4-5-20250929",
					usage: {
						input_tokens: 1200,
						cache_read_input_tokens: 2000,
						cache_creation_input_tokens: 300,
						output_tokens: 1,
					},
				},
			},
			{
				type: "content_block_delta",
				delta: { type: "text_delta", text: '"usage": {"output_tokens": 999999}' },
			},
			{ type: "message_delta", usage: { output_tokens: 40 } },
			{ type: "message_delta", usage: { output_tokens: 80 } },
			{ type: "message_stop" },
		]);
		expect(read("anthropic", true, text)).toEqual({
			model: "claude-sonnet-4-5-20250929",
			usage: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 2000, cacheWriteTokens: 300 },
		});
	});

	it("reads a whole Anthropic message", () => {
		const body = JSON.stringify({
			type: "message",
			model: "m",
			usage: { input_tokens: 50, output_tokens: 5 },
		});
		expect(read("anthropic", false, body).usage).toEqual({
			inputTokens: 50,
			outputTokens: 5,
			cacheReadTokens: 0,
			cacheWriteTokens: 0,
		});
	});

	it("reads the Responses API's closing event, and counts cached input apart", () => {
		const text = sse([
			{ type: "response.created", response: { object: "response", model: "gpt-5.5", usage: null } },
			{
				type: "response.completed",
				response: {
					object: "response",
					model: "gpt-5.5",
					usage: {
						input_tokens: 1200,
						input_tokens_details: { cached_tokens: 300 },
						output_tokens: 40,
					},
				},
			},
		]);
		expect(read("responses", true, text)).toEqual({
			model: "gpt-5.5",
			usage: { inputTokens: 900, outputTokens: 40, cacheReadTokens: 300, cacheWriteTokens: 0 },
		});
	});

	it("reads a chat completion's usage chunk, over CRLF and [DONE]", () => {
		const chunks = [
			{ model: "test-coder-1", choices: [{ delta: { content: "hi" } }] },
			{
				model: "test-coder-1",
				choices: [],
				usage: {
					prompt_tokens: 1500,
					completion_tokens: 40,
					prompt_tokens_details: { cached_tokens: 1000 },
				},
			},
		];
		const text = `${chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("")}data: [DONE]\r\n\r\n`;
		expect(read("chat", true, text, 3)).toEqual({
			model: "test-coder-1",
			usage: { inputTokens: 500, outputTokens: 40, cacheReadTokens: 1000, cacheWriteTokens: 0 },
		});
	});

	it("reads Gemini's last chunk, streamed or as the JSON array of an unstreamed stream", () => {
		const chunks = [
			{
				modelVersion: "gemini-2.5-pro",
				usageMetadata: { promptTokenCount: 1200, totalTokenCount: 1200 },
			},
			{
				modelVersion: "gemini-2.5-pro",
				usageMetadata: {
					promptTokenCount: 1200,
					cachedContentTokenCount: 800,
					candidatesTokenCount: 20,
					thoughtsTokenCount: 5,
				},
			},
		];
		const expected = {
			model: "gemini-2.5-pro",
			usage: { inputTokens: 400, outputTokens: 25, cacheReadTokens: 800, cacheWriteTokens: 0 },
		};
		expect(
			read("gemini", true, chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("")),
		).toEqual(expected);
		expect(read("gemini", false, JSON.stringify(chunks))).toEqual(expected);
	});

	it("keeps what it cannot read at zero: counts negative, fractional, not numbers, or not JSON", () => {
		const text = sse([
			{
				type: "message_start",
				message: { usage: { input_tokens: -5, output_tokens: "9", cache_read_input_tokens: 2.7 } },
			},
		]);
		expect(read("anthropic", true, `${text}data: {not json\n\n`).usage).toEqual({
			inputTokens: 0,
			outputTokens: 0,
			cacheReadTokens: 2,
			cacheWriteTokens: 0,
		});
		expect(read("chat", false, "<html>502</html>").usage.inputTokens).toBe(0);
	});
});
