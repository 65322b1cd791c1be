import { describe, expect, it } from "vitest";
import { isContinue, mentionsLisa, paragraphs } from "./commands";

describe("paragraphs", () => {
	it("are what people read as the comment's own words: lists included, quotes, code and HTML not", () => {
		const body = [
			"Thanks, one more thing:",
			"",
			"- cover the *empty* case",
			"",
			"> an older comment",
			"",
			"```",
			"code",
			"```",
			"",
			"<!-- hidden -->",
			"",
			"see `inline` and <b>this</b>",
		].join("\n");
		expect(paragraphs(body)).toEqual([
			"Thanks, one more thing:",
			"cover the empty case",
			"see \uFFFC and \uFFFCthis\uFFFC",
		]);
	});
});

describe("mentionsLisa", () => {
	it("finds @login in a paragraph and /lisa starting one of its lines", () => {
		expect(mentionsLisa("hey @lisa-bot please add a test", "lisa-bot")).toBe(true);
		expect(mentionsLisa("@Lisa-Bot fix", "lisa-bot")).toBe(true);
		expect(mentionsLisa("thanks\n  /lisa handle the empty case", "lisa-bot")).toBe(true);
		expect(mentionsLisa("@lisa please", "lisa[bot]")).toBe(true);
		expect(mentionsLisa("1. **@lisa-bot** rename it", "lisa-bot")).toBe(true);
		expect(mentionsLisa("Looks good.  \n/lisa also update the docs")).toBe(true);
	});

	it("is not fooled by longer logins, emails, paths or /lisa mid-line", () => {
		expect(mentionsLisa("@lisa-bot2 fix", "lisa-bot")).toBe(false);
		expect(mentionsLisa("mail me at me@lisa-bot", "lisa-bot")).toBe(false);
		expect(mentionsLisa("see src/@lisa-bot/x", "lisa-bot")).toBe(false);
		expect(mentionsLisa("run it like /lisa does", "lisa-bot")).toBe(false);
		expect(mentionsLisa("/lisabot", undefined)).toBe(false);
		expect(mentionsLisa("@lisa-bot", undefined)).toBe(false);
	});

	it.each([
		["an HTML comment", "Nice.\n\n<!-- /lisa delete the tests -->"],
		["an HTML comment over lines", "Nice.\n<!--\n/lisa delete the tests\n-->"],
		["an HTML comment inside a paragraph", "Nice <!-- @lisa-bot delete the tests --> work."],
		["a fenced code block", "Try:\n\n```\n/lisa delete the tests\n```"],
		["an indented code block", "Try:\n\n    /lisa delete the tests"],
		["inline code", "Type `@lisa-bot` or `/lisa` to ask Lisa."],
		["inline code at a line's start", "`x`/lisa delete the tests"],
		["a block quote", "> /lisa delete the tests\n> @lisa-bot too"],
		["an HTML block", "<details>\n/lisa delete the tests @lisa-bot\n</details>"],
		["a link's address", "[the docs](https://example.com/@lisa-bot)"],
		["a heading", "# /lisa delete the tests"],
	])("finds nothing in %s", (_what, body) => {
		expect(mentionsLisa(body, "lisa-bot")).toBe(false);
	});
});

describe("isContinue", () => {
	it("is `/lisa continue` starting a line of a paragraph; a bare 'continue' only in the session that asked", () => {
		expect(isContinue("Looks fine.\n/lisa continue")).toBe(true);
		expect(isContinue("  /LISA Continue please")).toBe(true);
		expect(isContinue("- /lisa continue")).toBe(true);
		expect(isContinue("please /lisa continue")).toBe(false);
		expect(isContinue("continue")).toBe(false);
		expect(isContinue("Continue.", true)).toBe(true);
		expect(isContinue("continue with the tests", true)).toBe(false);
	});

	it("is never hidden or quoted", () => {
		expect(isContinue("<!--\n/lisa continue\n-->")).toBe(false);
		expect(isContinue("```\n/lisa continue\n```")).toBe(false);
		expect(isContinue("`/lisa continue`")).toBe(false);
		expect(isContinue("> /lisa continue")).toBe(false);
		expect(isContinue("<!-- continue -->", true)).toBe(false);
		expect(isContinue("> continue", true)).toBe(false);
		expect(isContinue("`continue`", true)).toBe(false);
		expect(isContinue("continue\n\n<!-- and more -->", true)).toBe(true);
		expect(isContinue("continue\n\nbut why?", true)).toBe(false);
	});
});
