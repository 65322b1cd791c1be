/**
 * Linear's filter language (IssueFilter, WorkflowStateFilter, ...) evaluated against plain "views"
 * of the records, plus Relay-style pagination. A filter field the view does not know is an error,
 * never a silent match.
 */
import { notImplemented } from "./errors";

export type Filter = { [key: string]: unknown };
type ViewValue = string | number | boolean | null | View | View[];
export type View = { [key: string]: ViewValue };

const COMPARATOR_OPS = new Set([
	"eq",
	"neq",
	"in",
	"nin",
	"null",
	"lt",
	"lte",
	"gt",
	"gte",
	"eqIgnoreCase",
	"neqIgnoreCase",
	"contains",
	"containsIgnoreCase",
	"containsIgnoreCaseAndAccent",
	"notContains",
	"notContainsIgnoreCase",
	"startsWith",
	"startsWithIgnoreCase",
	"notStartsWith",
	"endsWith",
	"notEndsWith",
]);

function isView(value: unknown): value is View {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Does the view satisfy the filter? `path` names the filter in error messages. */
export function matchesFilter(
	view: View,
	filter: Filter | null | undefined,
	path: string,
	now: Date,
): boolean {
	if (!filter) return true;
	for (const [key, cond] of Object.entries(filter)) {
		if (cond === null || cond === undefined) continue;
		if (key === "and") {
			if (!(cond as Filter[]).every((f) => matchesFilter(view, f, path, now))) return false;
		} else if (key === "or") {
			if (!(cond as Filter[]).some((f) => matchesFilter(view, f, path, now))) return false;
		} else {
			if (!(key in view)) throw notImplemented(`filter field ${path}.${key}`);
			if (!matchField(view[key] ?? null, cond as Filter, `${path}.${key}`, now)) return false;
		}
	}
	return true;
}

function matchField(value: ViewValue, cond: Filter, path: string, now: Date): boolean {
	if (Array.isArray(value)) return matchCollection(value, cond, path, now);
	if (Object.keys(cond).every((k) => COMPARATOR_OPS.has(k))) return compare(value, cond, path, now);
	// A nested entity filter, possibly with `null` for a nullable relation.
	const { null: isNull, ...rest } = cond;
	if (!isView(value)) return isNull === true;
	if (isNull === true) return false;
	return matchesFilter(value, rest, path, now);
}

/** Collection filters: some / every / length / null, and bare fields meaning "some element". */
function matchCollection(items: View[], cond: Filter, path: string, now: Date): boolean {
	const element: Filter = {};
	for (const [key, sub] of Object.entries(cond)) {
		if (sub === null || sub === undefined) continue;
		switch (key) {
			case "and":
				if (!(sub as Filter[]).every((f) => matchCollection(items, f, path, now))) return false;
				break;
			case "or":
				if (!(sub as Filter[]).some((f) => matchCollection(items, f, path, now))) return false;
				break;
			case "some":
				if (!items.some((i) => matchesFilter(i, sub as Filter, path, now))) return false;
				break;
			case "every":
				if (!items.every((i) => matchesFilter(i, sub as Filter, path, now))) return false;
				break;
			case "length":
				if (!compare(items.length, sub as Filter, `${path}.length`, now)) return false;
				break;
			case "null":
				if ((items.length === 0) !== sub) return false;
				break;
			default:
				element[key] = sub;
		}
	}
	if (Object.keys(element).length === 0) return true;
	return items.some((i) => matchesFilter(i, element, path, now));
}

const DURATION =
	/^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** ISO dates compare as times; ISO durations ("-P2W") are relative to now. */
function comparable(value: unknown, now: Date): unknown {
	if (typeof value !== "string") return value;
	const d = DURATION.exec(value);
	if (d && value.length > 1) {
		const n = (i: number) => Number(d[i] ?? 0);
		const sign = d[1] ? -1 : 1;
		const at = new Date(now);
		at.setUTCFullYear(at.getUTCFullYear() + sign * n(2));
		at.setUTCMonth(at.getUTCMonth() + sign * n(3));
		at.setUTCDate(at.getUTCDate() + sign * (7 * n(4) + n(5)));
		return at.getTime() + sign * ((n(6) * 60 + n(7)) * 60 + n(8)) * 1000;
	}
	if (/^\d{4}-\d{2}-\d{2}/.test(value)) {
		const t = Date.parse(value);
		if (!Number.isNaN(t)) return t;
	}
	return value;
}

function fold(s: string): string {
	return s
		.normalize("NFD")
		.replace(/[\u0300-\u036f]/g, "")
		.toLowerCase();
}

function compare(value: ViewValue, ops: Filter, path: string, now: Date): boolean {
	if (isView(value) || Array.isArray(value)) {
		const onlyNull = Object.keys(ops).every((k) => k === "null");
		if (!onlyNull) throw notImplemented(`comparator on entity ${path}`);
	}
	const v = comparable(value, now);
	const s = typeof value === "string" ? value : undefined;
	for (const [op, arg] of Object.entries(ops)) {
		if (arg === undefined) continue;
		const a = comparable(arg, now);
		const text = typeof arg === "string" ? arg : "";
		let ok: boolean;
		switch (op) {
			case "eq":
				ok = v === a;
				break;
			case "neq":
				ok = v !== a;
				break;
			case "in":
				ok = (arg as unknown[]).some((x) => comparable(x, now) === v);
				break;
			case "nin":
				ok = !(arg as unknown[]).some((x) => comparable(x, now) === v);
				break;
			case "null":
				ok = (value === null) === arg;
				break;
			case "lt":
				ok = value !== null && (v as number) < (a as number);
				break;
			case "lte":
				ok = value !== null && (v as number) <= (a as number);
				break;
			case "gt":
				ok = value !== null && (v as number) > (a as number);
				break;
			case "gte":
				ok = value !== null && (v as number) >= (a as number);
				break;
			case "eqIgnoreCase":
				ok = s?.toLowerCase() === text.toLowerCase();
				break;
			case "neqIgnoreCase":
				ok = s === undefined || s.toLowerCase() !== text.toLowerCase();
				break;
			case "contains":
				ok = s?.includes(text) === true;
				break;
			case "containsIgnoreCase":
				ok = s?.toLowerCase().includes(text.toLowerCase()) === true;
				break;
			case "containsIgnoreCaseAndAccent":
				ok = s !== undefined && fold(s).includes(fold(text));
				break;
			case "notContains":
				ok = s === undefined || !s.includes(text);
				break;
			case "notContainsIgnoreCase":
				ok = s === undefined || !s.toLowerCase().includes(text.toLowerCase());
				break;
			case "startsWith":
				ok = s?.startsWith(text) === true;
				break;
			case "startsWithIgnoreCase":
				ok = s?.toLowerCase().startsWith(text.toLowerCase()) === true;
				break;
			case "notStartsWith":
				ok = s === undefined || !s.startsWith(text);
				break;
			case "endsWith":
				ok = s?.endsWith(text) === true;
				break;
			case "notEndsWith":
				ok = s === undefined || !s.endsWith(text);
				break;
			default:
				throw notImplemented(`comparator ${path}.${op}`);
		}
		if (!ok) return false;
	}
	return true;
}

// ---- pagination ----

export interface ConnectionArgs {
	first?: number | null;
	after?: string | null;
	last?: number | null;
	before?: string | null;
	orderBy?: string | null;
	includeArchived?: boolean | null;
}

export interface Connection<T> {
	nodes: T[];
	edges: { node: T; cursor: string }[];
	pageInfo: {
		hasNextPage: boolean;
		hasPreviousPage: boolean;
		startCursor: string | null;
		endCursor: string | null;
	};
}

interface Pageable {
	id: string;
	updatedAt: string;
	archivedAt?: string | null;
}

/**
 * A Relay connection over the items. Cursors are node ids (as in Linear). Order: as given
 * (creation order), or most recently updated first for `orderBy: updatedAt`. Default page: 50.
 */
export function paginate<T extends Pageable>(items: T[], args: ConnectionArgs): Connection<T> {
	let all = args.includeArchived ? [...items] : items.filter((i) => !i.archivedAt);
	if (args.orderBy === "updatedAt")
		all = all.sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt));
	let start = 0;
	let end = all.length;
	if (args.after) {
		const i = all.findIndex((x) => x.id === args.after);
		start = i === -1 ? all.length : i + 1;
	}
	if (args.before) {
		const i = all.findIndex((x) => x.id === args.before);
		end = i === -1 ? end : i;
	}
	if (typeof args.first === "number") end = Math.min(end, start + args.first);
	else if (typeof args.last === "number") start = Math.max(start, end - args.last);
	else end = Math.min(end, start + 50);
	const nodes = all.slice(start, Math.max(start, end));
	return {
		nodes,
		edges: nodes.map((node) => ({ node, cursor: node.id })),
		pageInfo: {
			hasNextPage: end < all.length,
			hasPreviousPage: start > 0,
			startCursor: nodes[0]?.id ?? null,
			endCursor: nodes.at(-1)?.id ?? null,
		},
	};
}
