import { describe, expect, it } from "vitest";
import type { EpicTaskState, EpicTaskStatus } from "./epic";
import { blockedBy, epicOutcome, findCycle, readyTasks, topologicalOrder } from "./epic-graph";

const node = (id: string, ...dependsOn: string[]) => ({ id, dependsOn });
/** 01 → {02, 03} → 04 */
const diamond = [node("04", "02", "03"), node("03", "01"), node("02", "01"), node("01")];

const task = (id: string, status: EpicTaskStatus, ...dependsOn: string[]): EpicTaskState => ({
	id,
	status,
	dependsOn,
	title: `Task ${id}`,
	repo: "api",
	goal: "g",
	doneWhen: "d",
	file: `tasks/${id}-t.md`,
	body: "",
});

describe("findCycle", () => {
	it("finds none in a diamond, a chain or a forest", () => {
		expect(findCycle(diamond)).toBeUndefined();
		expect(findCycle([node("01"), node("02", "01"), node("03", "02")])).toBeUndefined();
		expect(findCycle([node("01"), node("02")])).toBeUndefined();
		expect(findCycle([])).toBeUndefined();
	});

	it("names the cycle as a path back to its start", () => {
		expect(findCycle([node("01", "03"), node("02", "01"), node("03", "02")])).toEqual([
			"01",
			"03",
			"02",
			"01",
		]);
		// Reached from a task outside it: only the cycle is named.
		expect(findCycle([node("01", "02"), node("02", "03"), node("03", "02")])).toEqual([
			"02",
			"03",
			"02",
		]);
	});

	it("finds a task that depends on itself", () => {
		expect(findCycle([node("01"), node("02", "01", "02")])).toEqual(["02", "02"]);
	});

	it("ignores dependencies on unknown tasks", () => {
		expect(findCycle([node("01", "09")])).toBeUndefined();
	});

	it("walks a long chain without recursion", () => {
		const chain = Array.from({ length: 20_000 }, (_, i) => node(String(i), String(i + 1)));
		expect(findCycle(chain)).toBeUndefined();
		chain.push(node("20000", "0"));
		expect(findCycle(chain)).toHaveLength(20_002);
	});
});

describe("topologicalOrder", () => {
	it("puts every task after its dependencies, in the given order where free", () => {
		expect(topologicalOrder(diamond)).toEqual(["01", "03", "02", "04"]);
		const sorted = [...diamond].sort((a, b) => a.id.localeCompare(b.id));
		expect(topologicalOrder(sorted)).toEqual(["01", "02", "03", "04"]);
		expect(topologicalOrder([node("01", "03"), node("02"), node("03", "02")])).toEqual([
			"02",
			"03",
			"01",
		]);
	});

	it("puts the tasks on a cycle last", () => {
		expect(topologicalOrder([node("01", "02"), node("02", "01"), node("03")])).toEqual([
			"03",
			"01",
			"02",
		]);
	});
});

describe("running the tasks", () => {
	it("starts a waiting task once every dependency is done", () => {
		const tasks = [
			task("01", "done"),
			task("02", "waiting", "01"),
			task("03", "in_review", "01"),
			task("04", "waiting", "02", "03"),
			task("05", "planned"),
		];
		expect(readyTasks(tasks).map((t) => t.id)).toEqual(["02"]);
		expect(epicOutcome(tasks)).toBe("running");
		const later = tasks.map((t) => ({ ...t, status: t.id === "04" ? t.status : "done" }) as const);
		expect(readyTasks(later).map((t) => t.id)).toEqual(["04"]);
	});

	it("blocks every task downstream of a failed one, naming the failed task", () => {
		const tasks = [
			task("01", "done"),
			task("02", "failed", "01"),
			task("03", "running", "01"),
			task("04", "waiting", "02", "03"),
			task("05", "blocked", "04"),
			task("06", "waiting", "03"),
		];
		expect([...blockedBy(tasks)]).toEqual([
			["04", "02"],
			["05", "02"],
		]);
		expect(readyTasks(tasks)).toEqual([]);
		// 03 still runs and 06 may start after it.
		expect(epicOutcome(tasks)).toBe("running");
		const ended = tasks.map((t) => (t.id === "03" ? { ...t, status: "failed" as const } : t));
		expect(blockedBy(ended).get("06")).toBe("03");
		expect(epicOutcome(ended)).toBe("failed");
	});

	it("succeeds when every task is done, and not before", () => {
		expect(epicOutcome([task("01", "done"), task("02", "done", "01")])).toBe("succeeded");
		expect(epicOutcome([task("01", "done"), task("02", "in_review", "01")])).toBe("running");
		expect(epicOutcome([task("01", "failed"), task("02", "done")])).toBe("failed");
	});
});
