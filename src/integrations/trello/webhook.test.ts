import { describe, expect, it } from "vitest";
import { signTrello } from "../../../test/doubles/trello/server";
import { trelloSignedBytes } from "./webhook";

const trelloSignatureValid = (...args: Parameters<typeof trelloSignedBytes>) =>
	trelloSignedBytes(...args) !== undefined;

const URL = "https://lisa.example.com/webhooks/trello";
const SECRET = "app-secret";

describe("Trello webhook signature", () => {
	it("accepts Trello's signature over body + callback URL, also with non-ASCII text", () => {
		for (const body of [
			'{"action":{"id":"a1"}}',
			'{"action":{"data":{"text":"fix – “now” ✓ 🚀"}}}',
		]) {
			expect(
				trelloSignatureValid(Buffer.from(body), URL, SECRET, signTrello(body, URL, SECRET)),
			).toBe(true);
		}
	});

	it("rejects another secret, another callback URL, or a changed body", () => {
		const body = '{"action":{"id":"a1"}}';
		const good = signTrello(body, URL, SECRET);
		expect(trelloSignatureValid(Buffer.from(body), URL, "other", good)).toBe(false);
		expect(
			trelloSignatureValid(Buffer.from(body), "http://10.0.0.5/webhooks/trello", SECRET, good),
		).toBe(false);
		expect(trelloSignatureValid(Buffer.from(`${body} `), URL, SECRET, good)).toBe(false);
		expect(trelloSignatureValid(Buffer.from(body), URL, SECRET, "short")).toBe(false);
	});
});
