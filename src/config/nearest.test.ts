import { describe, expect, it } from "vitest";
import { editDistance, nearest } from "./nearest";

describe("nearest", () => {
	it("counts a swap of two neighbours as one edit", () => {
		expect(editDistance("valdiate", "validate")).toBe(1);
		expect(editDistance("lable", "label")).toBe(1);
		expect(editDistance("max_attemps", "max_attempts")).toBe(1);
		expect(editDistance("", "abc")).toBe(3);
		expect(editDistance("kitten", "sitting")).toBe(3);
	});

	it("suggests only a close name, the closest, case ignored", () => {
		const keys = ["max_attempts", "max_validation_retries", "parallel_steps"];
		expect(nearest("max_attemps", keys)).toBe("max_attempts");
		expect(nearest("MAX_ATTEMPTS", keys)).toBe("max_attempts");
		expect(nearest("timeout", keys)).toBeUndefined();
		expect(nearest("ab", ["ac", "abc"])).toBe("ac");
		expect(nearest("x", [])).toBeUndefined();
	});
});
