import { describe, expect, it } from "vitest";
import {
	changesLine,
	cleanPath,
	cleanTitle,
	MAX_CHANGE_PATH,
	MAX_LISTED_FILES,
	MAX_PR_TITLE,
	parseNumstat,
	stepChangesSchema,
} from "./changes";

describe("a step's changes", () => {
	it("totals every file, lists the most changed first, binary files as 0/0 and marked", () => {
		const out = "3\t1\tsrc/a.ts\0-\t-\tlogo.png\u0000120\t7\tsrc/big.ts\0";
		expect(parseNumstat(out)).toEqual({
			files: 3,
			additions: 123,
			deletions: 8,
			list: [
				{ path: "src/big.ts", additions: 120, deletions: 7 },
				{ path: "src/a.ts", additions: 3, deletions: 1 },
				{ path: "logo.png", additions: 0, deletions: 0, binary: true },
			],
		});
		expect(parseNumstat("")).toEqual({ files: 0, additions: 0, deletions: 0, list: [] });
	});

	it("lists at most 50 files but counts them all", () => {
		const out = Array.from({ length: 70 }, (_, i) => `${i}\t0\tf${i}\0`).join("");
		const c = parseNumstat(out);
		expect(c.files).toBe(70);
		expect(c.additions).toBe((69 * 70) / 2);
		expect(c.list).toHaveLength(MAX_LISTED_FILES);
		expect(c.list[0]).toEqual({ path: "f69", additions: 69, deletions: 0 });
		expect(stepChangesSchema.safeParse(c).success).toBe(true);
	});

	it("strips control and format characters from a path, and bounds it keeping the end", () => {
		const out = `1\t0\tsrc/\u001b[31mred\u0007\u202Etxt.exe\nnext\0`;
		expect(parseNumstat(out).list[0]?.path).toBe("src/[31mredtxt.exenext");
		const long = `${"d/".repeat(400)}name.ts`;
		const cut = cleanPath(long);
		expect(cut).toHaveLength(MAX_CHANGE_PATH);
		expect(cut.startsWith("…")).toBe(true);
		expect(cut.endsWith("/name.ts")).toBe(true);
		expect(parseNumstat("1\t1\t\u0000")).toEqual({
			files: 0,
			additions: 0,
			deletions: 0,
			list: [],
		});
		expect(parseNumstat("1\t1\t\u0001\u0002\0").list[0]?.path).toBe("(unnamed)");
	});

	it("keeps a title on one bounded line", () => {
		expect(cleanTitle("feat: a\n\tb\u0000c")).toBe("feat: a b c");
		expect(cleanTitle("x".repeat(1000))).toHaveLength(MAX_PR_TITLE);
	});

	it("says the change in one short line", () => {
		expect(changesLine({ files: 3, additions: 120, deletions: 8, list: [] })).toBe(
			"3 files +120 −8",
		);
		expect(changesLine({ files: 1, additions: 0, deletions: 2, list: [] })).toBe("1 file +0 −2");
	});
});
