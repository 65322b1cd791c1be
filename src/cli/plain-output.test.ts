import { afterEach, describe, expect, it, vi } from "vitest";

// plain-output decides when it is imported: each case imports a fresh copy under its own NO_COLOR.
async function importedWith(noColor: string | undefined) {
	if (noColor === undefined) delete process.env.NO_COLOR;
	else process.env.NO_COLOR = noColor;
	vi.resetModules();
	return import("./plain-output");
}

const saved = process.env.NO_COLOR;
afterEach(() => {
	if (saved === undefined) delete process.env.NO_COLOR;
	else process.env.NO_COLOR = saved;
});

describe("plain output", () => {
	it("gives citty NO_COLOR=1 for any NO_COLOR, then puts the user's own value back", async () => {
		const { restoreNoColor } = await importedWith("yes");
		expect(process.env.NO_COLOR).toBe("1");
		restoreNoColor();
		expect(process.env.NO_COLOR).toBe("yes");
	});

	it("sets NO_COLOR only for the import when the user had none (tests run without a terminal)", async () => {
		const { restoreNoColor } = await importedWith(undefined);
		expect(process.env.NO_COLOR).toBe("1");
		restoreNoColor();
		expect(process.env.NO_COLOR).toBeUndefined();
	});
});
