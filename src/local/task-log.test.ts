import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BoundedLog } from "./task-log";

let dir: string;
beforeAll(async () => {
	dir = await mkdtemp(path.join(os.tmpdir(), "lisa-task-log-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a task's log", () => {
	it("keeps at most the current file and the one before, each within the bound, newest last", async () => {
		const file = path.join(dir, "step-0-attempt-1.log");
		const log = new BoundedLog(file, 1000);
		for (let i = 0; i < 100; i++)
			log.write(Buffer.from(`line ${String(i).padStart(3, "0")} ${"x".repeat(40)}\n`));
		log.close();
		const current = await readFile(file, "utf8");
		const previous = await readFile(`${file}.1`, "utf8");
		expect(current.length).toBeLessThanOrEqual(1000);
		expect(previous.length).toBeLessThanOrEqual(1000);
		expect(current.trimEnd().split("\n").at(-1)).toMatch(/^line 099 /);
		expect(Number(previous.match(/^line (\d+)/)?.[1])).toBeLessThan(
			Number(current.match(/^line (\d+)/)?.[1]),
		);
		expect((await stat(file)).mode & 0o777).toBe(0o600);
	});

	it("keeps only the end of a single write larger than the bound", async () => {
		const file = path.join(dir, "huge.log");
		const log = new BoundedLog(file, 100);
		log.write(Buffer.from(`${"a".repeat(500)}${"z".repeat(100)}`));
		log.close();
		expect(await readFile(file, "utf8")).toBe("z".repeat(100));
	});
});
