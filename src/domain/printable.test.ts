import { describe, expect, it } from "vitest";
import { printable, stripAnsi } from "./printable";

const ESC = "\u001b";

describe("printable", () => {
	it("drops colours, titles and cursor moves, keeping the text", () => {
		expect(stripAnsi(`${ESC}[1;31mred${ESC}[0m ${ESC}]0;title\u0007ok`)).toBe("red ok");
		expect(printable(`${ESC}[2J${ESC}[Hcleared ${ESC}]52;c;cGF5bG9hZA==\u0007copied`)).toBe(
			"cleared copied",
		);
	});

	it("drops every control character but tab and newline, and the bidi overrides", () => {
		expect(printable("a\tb\r\nc\rd\u0007e\u0008f\u009b31mg\u202eh\u2066i")).toBe(
			"a\tb\ncdef31mghi",
		);
		expect(printable(`bare ${ESC} escape`)).toBe("bare  escape");
		expect(printable("plain text, ünïcode and emoji 🙂")).toBe("plain text, ünïcode and emoji 🙂");
		// Zero-width and direction marks hide or reorder what a reader sees: gone too.
		expect(printable("ad\u200bmin\u200e\ufeff")).toBe("admin");
	});
});
