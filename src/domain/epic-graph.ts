import type { EpicTaskState } from "./epic";

// The epic's task graph (docs/epics.md › Epics): checked for cycles when planned, ordered for
// creating the sub-issues, and read while the tasks run: which may start, which can never start,
// how it ends.

export interface GraphNode {
	id: string;
	dependsOn: readonly string[];
}

/**
 * A cycle of the graph as a path that returns to its start (`["01", "02", "01"]`; a task depending
 * on itself: `["01", "01"]`), or undefined. Dependencies on unknown ids are ignored.
 */
export function findCycle(nodes: readonly GraphNode[]): string[] | undefined {
	const byId = new Map(nodes.map((n) => [n.id, n]));
	const state = new Map<string, "open" | "closed">();
	const path: string[] = [];
	// Depth-first, iteratively: a plan is small, but its text is untrusted.
	for (const start of nodes) {
		if (state.has(start.id)) continue;
		const stack: { id: string; next: number }[] = [{ id: start.id, next: 0 }];
		state.set(start.id, "open");
		path.push(start.id);
		while (stack.length) {
			const top = stack[stack.length - 1] as { id: string; next: number };
			const deps = byId.get(top.id)?.dependsOn ?? [];
			const dep = deps[top.next++];
			if (dep === undefined) {
				state.set(top.id, "closed");
				stack.pop();
				path.pop();
				continue;
			}
			if (!byId.has(dep) || state.get(dep) === "closed") continue;
			if (state.get(dep) === "open") return [...path.slice(path.indexOf(dep)), dep];
			state.set(dep, "open");
			path.push(dep);
			stack.push({ id: dep, next: 0 });
		}
	}
	return undefined;
}

/**
 * The ids with every node after the nodes it depends on; among the nodes free to go, the one given
 * first goes first (so nodes given sorted by id come out by id where the graph allows). Nodes on a
 * cycle, which no order satisfies, come last in the order given.
 */
export function topologicalOrder(nodes: readonly GraphNode[]): string[] {
	const known = new Set(nodes.map((n) => n.id));
	const placed = new Set<string>();
	const order: string[] = [];
	let progress = true;
	while (progress) {
		progress = false;
		const next = nodes.find(
			(n) => !placed.has(n.id) && n.dependsOn.every((d) => !known.has(d) || placed.has(d)),
		);
		if (next) {
			placed.add(next.id);
			order.push(next.id);
			progress = true;
		}
	}
	return [...order, ...nodes.filter((n) => !placed.has(n.id)).map((n) => n.id)];
}

/** The tasks that may start now: waiting, with every task they depend on done. */
export function readyTasks(tasks: readonly EpicTaskState[]): EpicTaskState[] {
	const status = new Map(tasks.map((t) => [t.id, t.status]));
	return tasks.filter(
		(t) => t.status === "waiting" && t.dependsOn.every((d) => status.get(d) === "done"),
	);
}

/** A task not started yet: it may still start, or be blocked. */
const UNSTARTED = new Set<EpicTaskState["status"]>(["planned", "waiting", "blocked"]);

/** Tasks that will not be done: their run failed or was cancelled. */
const ENDED_UNDONE = new Set<EpicTaskState["status"]>(["failed", "cancelled"]);

/**
 * The tasks that can never start: each unstarted task depending, directly or through other such
 * tasks, on a failed or cancelled one → that task's id (the first found, in dependency order).
 */
export function blockedBy(tasks: readonly EpicTaskState[]): Map<string, string> {
	const byId = new Map(tasks.map((t) => [t.id, t]));
	const blocked = new Map<string, string>();
	for (const id of topologicalOrder(tasks)) {
		const task = byId.get(id) as EpicTaskState;
		if (!UNSTARTED.has(task.status)) continue;
		for (const dep of task.dependsOn) {
			const status = byId.get(dep)?.status;
			const root = status && ENDED_UNDONE.has(status) ? dep : blocked.get(dep);
			if (root === undefined) continue;
			blocked.set(id, root);
			break;
		}
	}
	return blocked;
}

/**
 * Where the epic's tasks stand: succeeded when every task is done; failed when some task failed (or
 * was cancelled) and nothing is running, waiting for its merge or still able to start; running
 * otherwise.
 */
export function epicOutcome(tasks: readonly EpicTaskState[]): "running" | "succeeded" | "failed" {
	if (tasks.every((t) => t.status === "done")) return "succeeded";
	const blocked = blockedBy(tasks);
	const alive = tasks.some(
		(t) =>
			t.status === "running" ||
			t.status === "in_review" ||
			((t.status === "planned" || t.status === "waiting") && !blocked.has(t.id)),
	);
	return alive ? "running" : "failed";
}
