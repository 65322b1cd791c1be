import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
	DeleteCommand,
	type DynamoDBDocumentClient,
	GetCommand,
	PutCommand,
	QueryCommand,
	type QueryCommandInput,
	UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { encodeTime, ulid } from "ulid";
import { type Guardrail, MAX_GUARDRAILS } from "../domain/guardrails";
import { ULID_PATTERN } from "../domain/ids";
import { type Run, type RunPatch, type Step, workSteps } from "../domain/run";
import type { RunStatus } from "../domain/states";
import { INDEXES, type IndexName, key } from "./table";

export class VersionConflict extends Error {
	constructor(runId: string, version: number) {
		super(`run ${runId} changed since version ${version}`);
		this.name = "VersionConflict";
	}
}

export interface RunEvent {
	id: string;
	at: string;
	type: string;
	step?: number;
	message: string;
	data?: Record<string, unknown>;
}

export type RequestObserver = (command: string, input: unknown) => void;

export interface Page<T> {
	items: T[];
	nextCursor?: string;
}

/** Storage-only attributes: the keys, and `repoNames`, which lets a list be filtered by repo. */
const KEY_ATTRS = [
	"pk",
	"sk",
	"gsi1pk",
	"gsi1sk",
	"gsi2pk",
	"gsi2sk",
	"gsi3pk",
	"gsi3sk",
	"kind",
	"repoNames",
];

/** Which runs a listing wants; every field narrows it. Times are ISO, `until` exclusive. */
export interface RunFilter {
	status?: RunStatus;
	source?: string;
	/** A configured repo's name: runs with a step in it. */
	repo?: string;
	/** The tracker's issue id or key. */
	issue?: string;
	/** Created at or after. */
	since?: string;
	/** Created before. */
	until?: string;
}

/**
 * How far a run's id (a ULID, made when the run was requested) may precede its creation: the
 * requests a queue outage held back. The id range only narrows the read; createdAt decides.
 */
const REQUEST_TO_CREATE_MARGIN_MS = 24 * 3600 * 1000;

const isConditionFailure = (err: unknown) =>
	err instanceof ConditionalCheckFailedException ||
	(err as { name?: string })?.name === "ConditionalCheckFailedException";

const encodeCursor = (k: Record<string, unknown>) =>
	Buffer.from(JSON.stringify(k)).toString("base64url");

/** What a cursor may hold: exactly the keys the store put in it, with the values it writes. */
type CursorShape = (k: Record<string, unknown>) => boolean;

/** Longest cursor the store makes (a run's keys in base64url) is far shorter. */
const MAX_CURSOR = 1024;

/**
 * The start key a cursor names, if it is one this store made for this listing; else InvalidCursor.
 * A cursor becomes DynamoDB's ExclusiveStartKey, so a made-up or foreign one (another listing's,
 * another run's) is refused here rather than by DynamoDB.
 */
function decodeCursor(
	cursor: string | undefined,
	shape: CursorShape,
): Record<string, unknown> | undefined {
	if (cursor === undefined) return undefined;
	if (cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursor();
	let parsed: unknown;
	try {
		parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
	} catch {
		throw new InvalidCursor();
	}
	if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
		throw new InvalidCursor();
	if (!shape(parsed as Record<string, unknown>)) throw new InvalidCursor();
	return parsed as Record<string, unknown>;
}

const ULID = ULID_PATTERN.source.slice(1, -1); // the one shape of run and event ids, unanchored
const RUN_PK = new RegExp(`^RUN#(${ULID})$`);
const EVENT_SK = new RegExp(`^EVT#${ULID}$`);
/** `<updatedAt>#<runId>`: the status index's sort key. */
const STATUS_SK = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z#(.+)$/;

const hasExactly = (k: Record<string, unknown>, names: string[]) =>
	Object.keys(k).length === names.length && names.every((n) => typeof k[n] === "string");

/** A position in a runs listing: a run item's keys and the index's, all of the same run. */
function runCursor(index: IndexName, status?: RunStatus): CursorShape {
	const { hashKey, rangeKey } = INDEXES[index];
	return (k) => {
		if (!hasExactly(k, ["pk", "sk", hashKey, rangeKey]) || k.sk !== "RUN") return false;
		const runId = RUN_PK.exec(k.pk as string)?.[1];
		if (!runId) return false;
		if (index === "byCreated") return k[hashKey] === key.feedPartition && k[rangeKey] === runId;
		return (
			status !== undefined &&
			k[hashKey] === key.statusPartition(status) &&
			STATUS_SK.exec(k[rangeKey] as string)?.[2] === runId
		);
	};
}

/** A position in one run's timeline: an event of that run. */
const eventCursor =
	(runId: string): CursorShape =>
	(k) =>
		hasExactly(k, ["pk", "sk"]) && k.pk === key.run(runId).pk && EVENT_SK.test(k.sk as string);

export class InvalidCursor extends Error {
	constructor() {
		super("invalid cursor");
		this.name = "InvalidCursor";
	}
}

/** An item without its storage-only attributes: the run, event or guardrail it holds. */
function stripKeys<T>(item: Record<string, unknown>): T {
	const rest = { ...item };
	for (const k of KEY_ATTRS) delete rest[k];
	return rest as T;
}

const toRun = stripKeys<Run>;

/** The repos a run works in (not the planning step's `*`): the attribute behind the repo filter. */
const repoNames = (steps: readonly Step[]) => [
	...new Set(workSteps({ steps }).map((st) => st.repo)),
];

/** Each filter of a listing as a clause on the run's attributes; its value is `:<field>`. */
const FILTERS = {
	source: { names: { "#src": "source" }, clause: "#src = :source" },
	repo: { names: { "#repos": "repoNames" }, clause: "contains(#repos, :repo)" },
	issue: {
		names: { "#iid": "issueId", "#ikey": "issueKey" },
		clause: "(#iid = :issue OR #ikey = :issue)",
	},
	since: { names: { "#created": "createdAt" }, clause: "#created >= :since" },
	until: { names: { "#created": "createdAt" }, clause: "#created < :until" },
} as const;

/** The filter expression for the fields an index's key condition does not cover. */
function runFilterExpression(f: Omit<RunFilter, "status">) {
	const names: Record<string, string> = {};
	const values: Record<string, unknown> = {};
	const parts: string[] = [];
	for (const [field, filter] of Object.entries(FILTERS)) {
		const value = f[field as keyof typeof FILTERS];
		if (!value) continue;
		Object.assign(names, filter.names);
		values[`:${field}`] = value;
		parts.push(filter.clause);
	}
	return { names, values, expression: parts.length ? parts.join(" AND ") : undefined };
}

function runIndexKeys(
	run: Pick<Run, "runId" | "source" | "issueId" | "status" | "createdAt">,
	updatedAt: string,
) {
	return {
		gsi1pk: key.issuePartition(run.source, run.issueId),
		gsi1sk: `${run.createdAt}#${run.runId}`,
		gsi2pk: key.statusPartition(run.status),
		gsi2sk: `${updatedAt}#${run.runId}`,
		gsi3pk: key.feedPartition,
		gsi3sk: run.runId,
	};
}

interface KeyRange {
	condition: string;
	names: Record<string, string>;
	values: Record<string, unknown>;
}

/** The creation feed's sort keys are run ids: ULIDs, whose first ten characters encode the time. */
function createdRange(f: Pick<RunFilter, "since" | "until">): KeyRange {
	if (!f.since && !f.until) return { condition: "", names: {}, values: {} };
	const from = f.since ? Date.parse(f.since) - REQUEST_TO_CREATE_MARGIN_MS : 0;
	const to = f.until ? Date.parse(f.until) : 2 ** 48 - 1;
	return {
		condition: " AND #r BETWEEN :from AND :to",
		names: { "#r": INDEXES.byCreated.rangeKey },
		values: {
			":from": encodeTime(Math.max(0, from), 10),
			// A ULID of the last millisecond before `until` sorts below this bound.
			":to": `${encodeTime(Math.max(0, to - 1), 10)}~`,
		},
	};
}

/** The status index sorts by last update (`<updatedAt>#<runId>`), which is never before creation. */
function statusRange(f: Pick<RunFilter, "since">): KeyRange {
	if (!f.since) return { condition: "", names: {}, values: {} };
	return {
		condition: " AND #r >= :updatedFrom",
		names: { "#r": INDEXES.byStatus.rangeKey },
		values: { ":updatedFrom": f.since },
	};
}

/** Builds `SET …` / `REMOVE …` clauses with placeholders for every name and value. */
class Expression {
	readonly names: Record<string, string> = {};
	readonly values: Record<string, unknown> = {};
	private readonly sets: string[] = [];
	private readonly removes: string[] = [];
	private n = 0;

	name(attr: string): string {
		const existing = Object.entries(this.names).find(([, v]) => v === attr)?.[0];
		if (existing) return existing;
		const p = `#n${this.n++}`;
		this.names[p] = attr;
		return p;
	}

	value(v: unknown): string {
		const p = `:v${this.n++}`;
		this.values[p] = v;
		return p;
	}

	assign(path: string, v: unknown): void {
		if (v === undefined) this.removes.push(path);
		else this.sets.push(`${path} = ${this.value(v)}`);
	}

	raw(clause: string): void {
		this.sets.push(clause);
	}

	toString(): string {
		return [
			this.sets.length ? `SET ${this.sets.join(", ")}` : "",
			this.removes.length ? `REMOVE ${this.removes.join(", ")}` : "",
		]
			.filter(Boolean)
			.join(" ");
	}
}

/**
 * DynamoDB single-table store. A run and its steps are one item, so every transition is one
 * version-checked conditional update; there are no transactions and no Scans.
 */
export class DynamoStore {
	private readonly observers = new Set<RequestObserver>();

	constructor(
		private readonly doc: DynamoDBDocumentClient,
		private readonly table: string,
	) {
		doc.middlewareStack.add(
			(next, context) => (args) => {
				for (const observe of this.observers) observe(context.commandName ?? "", args.input);
				return next(args);
			},
			{ step: "initialize", name: "lisaRequestObserver", override: true },
		);
	}

	/** Sees every request (operation name and input) until the returned function is called. */
	observe(observer: RequestObserver): () => void {
		this.observers.add(observer);
		return () => this.observers.delete(observer);
	}

	// ── runs ──────────────────────────────────────────────────────────────────────────────────

	/** Creates the run; false when a run with this id already exists (a redelivered request). */
	async createRun(run: Run): Promise<boolean> {
		try {
			await this.doc.send(
				new PutCommand({
					TableName: this.table,
					Item: {
						...key.run(run.runId),
						kind: "run",
						...runIndexKeys(run, run.updatedAt),
						repoNames: repoNames(run.steps),
						...run,
					},
					ConditionExpression: "attribute_not_exists(pk)",
				}),
			);
			return true;
		} catch (err) {
			if (isConditionFailure(err)) return false;
			throw err;
		}
	}

	async getRun(runId: string): Promise<Run | undefined> {
		const out = await this.doc.send(
			new GetCommand({ TableName: this.table, Key: key.run(runId), ConsistentRead: true }),
		);
		return out.Item ? toRun(out.Item) : undefined;
	}

	/** Applies `patch` if the run is still at `run.version`; returns the new run or throws VersionConflict. */
	async updateRun(run: Run, patch: RunPatch, now: string): Promise<Run> {
		const stepUpdates = patch.steps && Object.keys(patch.steps).length > 0;
		if (patch.appendSteps?.length && stepUpdates)
			throw new Error(
				"appendSteps and step updates must be separate patches (or use replaceSteps)",
			);
		if (patch.replaceSteps && (stepUpdates || patch.appendSteps?.length))
			throw new Error("replaceSteps replaces the whole list: no other step changes with it");
		const e = new Expression();
		e.assign(e.name("version"), run.version + 1);
		e.assign(e.name("updatedAt"), now);
		const idx = runIndexKeys({ ...run, ...patch.set }, now);
		for (const [attr, v] of Object.entries(idx)) e.assign(e.name(attr), v);
		for (const [field, v] of Object.entries(patch.set ?? {})) {
			if (field === "updatedAt") continue;
			e.assign(e.name(field), v);
		}
		for (const [i, fields] of Object.entries(patch.steps ?? {}))
			for (const [field, v] of Object.entries(fields))
				e.assign(`${e.name("steps")}[${Number(i)}].${e.name(field)}`, v);
		if (patch.replaceSteps) e.assign(e.name("steps"), patch.replaceSteps);
		if (patch.replaceSteps || patch.appendSteps?.length)
			e.assign(
				e.name("repoNames"),
				repoNames(patch.replaceSteps ?? [...run.steps, ...(patch.appendSteps ?? [])]),
			);
		if (patch.appendSteps?.length) {
			const steps = e.name("steps");
			e.raw(`${steps} = list_append(${steps}, ${e.value(patch.appendSteps)})`);
		}
		try {
			const out = await this.doc.send(
				new UpdateCommand({
					TableName: this.table,
					Key: key.run(run.runId),
					UpdateExpression: e.toString(),
					ConditionExpression: `${e.name("version")} = ${e.value(run.version)}`,
					ExpressionAttributeNames: e.names,
					ExpressionAttributeValues: e.values,
					ReturnValues: "ALL_NEW",
				}),
			);
			return toRun(out.Attributes ?? {});
		} catch (err) {
			if (isConditionFailure(err)) throw new VersionConflict(run.runId, run.version);
			throw err;
		}
	}

	/**
	 * The task's own writes: fields of its step (heartbeat, agent state, report), only while the step
	 * is still on the task's attempt and still launching or running: false tells the task of a
	 * cancelled, finished or superseded attempt to stop. Never touches the run's status or version.
	 */
	async updateStepFields(
		runId: string,
		stepIndex: number,
		attempt: number,
		fields: Partial<
			Pick<
				Step,
				"agentState" | "heartbeatAt" | "report" | "provider" | "branch" | "prUrl" | "validation"
			>
		>,
	): Promise<boolean> {
		const e = new Expression();
		const step = `${e.name("steps")}[${stepIndex}]`;
		for (const [field, v] of Object.entries(fields)) e.assign(`${step}.${e.name(field)}`, v);
		try {
			await this.doc.send(
				new UpdateCommand({
					TableName: this.table,
					Key: key.run(runId),
					UpdateExpression: e.toString(),
					ConditionExpression: `${step}.${e.name("attempt")} = ${e.value(attempt)} AND ${step}.${e.name("status")} IN (${e.value("launching")}, ${e.value("running")})`,
					ExpressionAttributeNames: e.names,
					ExpressionAttributeValues: e.values,
				}),
			);
			return true;
		} catch (err) {
			if (isConditionFailure(err)) return false;
			throw err;
		}
	}

	/**
	 * Runs matching `q`, newest first, a page at a time. By status: the status index, from `since`
	 * on (a run's last update is never before its creation). Otherwise: the creation feed, whose
	 * ULID sort keys turn the time range into a key range. Other fields filter the read.
	 */
	async listRuns(q: RunFilter & { limit: number; cursor?: string }): Promise<Page<Run>> {
		const index: IndexName = q.status ? "byStatus" : "byCreated";
		const { hashKey, rangeKey } = INDEXES[index];
		const filter = runFilterExpression(q);
		const range = q.status ? statusRange(q) : createdRange(q);
		return this.queryPage(
			{
				TableName: this.table,
				IndexName: index,
				KeyConditionExpression: `#h = :h${range.condition}`,
				ExpressionAttributeNames: { "#h": hashKey, ...range.names, ...filter.names },
				ExpressionAttributeValues: {
					":h": q.status ? key.statusPartition(q.status) : key.feedPartition,
					...range.values,
					...filter.values,
				},
				FilterExpression: filter.expression,
				ScanIndexForward: false,
			},
			q.limit,
			decodeCursor(q.cursor, runCursor(index, q.status)),
			[hashKey, rangeKey],
			toRun,
		);
	}

	/** Runs created in [since, until), newest first, at most `cap` (the stats' window). */
	async runsCreatedBetween<F extends keyof Run>(
		since: string,
		until: string,
		cap: number,
		fields: readonly F[],
	): Promise<{ runs: Pick<Run, F>[]; truncated: boolean }> {
		const range = createdRange({ since, until });
		const filter = runFilterExpression({ since, until });
		// Only the fields asked for cross the wire: a run's config snapshot and issue text are most of it.
		const projected = Object.fromEntries(fields.map((f, i) => [`#f${i}`, f]));
		const runs: Pick<Run, F>[] = [];
		let start: Record<string, unknown> | undefined;
		do {
			const out = await this.doc.send(
				new QueryCommand({
					TableName: this.table,
					IndexName: "byCreated",
					KeyConditionExpression: `gsi3pk = :h${range.condition}`,
					ExpressionAttributeNames: { ...range.names, ...filter.names, ...projected },
					ExpressionAttributeValues: {
						":h": key.feedPartition,
						...range.values,
						...filter.values,
					},
					FilterExpression: filter.expression,
					ProjectionExpression: Object.keys(projected).join(", "),
					ScanIndexForward: false,
					ExclusiveStartKey: start,
				}),
			);
			runs.push(...(out.Items ?? []).map(stripKeys<Pick<Run, F>>));
			start = out.LastEvaluatedKey;
		} while (start && runs.length < cap);
		return { runs: runs.slice(0, cap), truncated: runs.length > cap || start !== undefined };
	}

	/** Runs in `status` last updated in [after, before) (ISO times), oldest first — the sweeper's query. */
	async runsByStatus(
		status: RunStatus,
		window: { after?: string; before: string },
		limit = 100,
	): Promise<Run[]> {
		const page = await this.queryPage(
			{
				TableName: this.table,
				IndexName: "byStatus",
				KeyConditionExpression: "gsi2pk = :h AND gsi2sk BETWEEN :after AND :before",
				ExpressionAttributeValues: {
					":h": key.statusPartition(status),
					":after": window.after ?? "0",
					":before": window.before,
				},
				ScanIndexForward: true,
			},
			limit,
			undefined,
			["gsi2pk", "gsi2sk"],
			toRun,
		);
		return page.items;
	}

	async runsOfIssue(source: string, issueId: string, limit = 20): Promise<Run[]> {
		const page = await this.queryPage(
			{
				TableName: this.table,
				IndexName: "byIssue",
				KeyConditionExpression: "gsi1pk = :h",
				ExpressionAttributeValues: { ":h": key.issuePartition(source, issueId) },
				ScanIndexForward: false,
			},
			limit,
			undefined,
			["gsi1pk", "gsi1sk"],
			toRun,
		);
		return page.items;
	}

	/**
	 * Reads pages until `limit` items matched (a filter can thin pages out) and returns a cursor
	 * built from the last returned item, so the next page starts exactly after it.
	 */
	private async queryPage<T>(
		input: QueryCommandInput,
		limit: number,
		from: Record<string, unknown> | undefined,
		indexKeys: string[],
		map: (item: Record<string, unknown>) => T,
	): Promise<Page<T>> {
		// One item past the limit tells whether there is a next page, so a page that ends exactly at
		// the last item has no cursor.
		const items: Record<string, unknown>[] = [];
		let start = from;
		for (let pages = 0; pages < 10 && items.length <= limit; pages++) {
			const out = await this.doc.send(
				new QueryCommand({
					...input,
					Limit: limit + 1 - items.length + (input.FilterExpression ? 20 : 0),
					ExclusiveStartKey: start,
				}),
			);
			items.push(...(out.Items ?? []));
			start = out.LastEvaluatedKey;
			if (!start) break;
		}
		const page = items.slice(0, limit);
		const last = page[page.length - 1];
		// More than a page matched, or the page cap stopped a filtered read before the end (then an
		// empty page still carries where to go on).
		const more = items.length > limit || start !== undefined;
		const position = last
			? Object.fromEntries(["pk", "sk", ...indexKeys].map((k) => [k, last[k]]))
			: start;
		const nextCursor = more && position ? encodeCursor(position) : undefined;
		return { items: page.map(map), nextCursor };
	}

	// ── timeline ──────────────────────────────────────────────────────────────────────────────

	async appendEvent(
		runId: string,
		event: Omit<RunEvent, "id" | "at"> & { at?: string },
	): Promise<RunEvent> {
		const full: RunEvent = { id: ulid(), at: event.at ?? new Date().toISOString(), ...event };
		await this.createWithUpdate(key.event(runId, full.id), { kind: "event", ...full });
		return full;
	}

	/**
	 * Creates a new item with UpdateItem rather than PutItem: the agent task's IAM role may only
	 * update named attributes, so it can add timeline entries and guardrails but never replace an
	 * item such as the run's.
	 */
	private async createWithUpdate(
		itemKey: { pk: string; sk: string },
		fields: Record<string, unknown>,
	): Promise<void> {
		const e = new Expression();
		for (const [field, v] of Object.entries(fields))
			if (v !== undefined) e.assign(e.name(field), v);
		await this.doc.send(
			new UpdateCommand({
				TableName: this.table,
				Key: itemKey,
				UpdateExpression: e.toString(),
				ConditionExpression: "attribute_not_exists(pk)",
				ExpressionAttributeNames: e.names,
				ExpressionAttributeValues: e.values,
			}),
		);
	}

	/** The timeline from its start, from a page's cursor, or after the event with id `after`. */
	async listEvents(
		runId: string,
		limit: number,
		from: { cursor?: string; after?: string } = {},
	): Promise<Page<RunEvent>> {
		const start = from.after
			? key.event(runId, from.after)
			: decodeCursor(from.cursor, eventCursor(runId));
		return this.queryPage(
			{
				TableName: this.table,
				KeyConditionExpression: "pk = :pk AND begins_with(sk, :evt)",
				ExpressionAttributeValues: { ":pk": key.run(runId).pk, ":evt": "EVT#" },
				ScanIndexForward: true,
			},
			limit,
			start,
			[],
			stripKeys<RunEvent>,
		);
	}

	// ── per-repo guardrails ───────────────────────────────────────────────────────────────────

	/** Stores a guardrail and drops all but the newest `keep` of the repo's. */
	async addGuardrail(repo: string, entry: Guardrail, keep = MAX_GUARDRAILS): Promise<void> {
		await this.createWithUpdate(key.guardrail(repo, ulid()), { kind: "guardrail", ...entry });
		const out = await this.doc.send(
			new QueryCommand({
				TableName: this.table,
				KeyConditionExpression: "pk = :pk AND begins_with(sk, :g)",
				ExpressionAttributeValues: { ":pk": key.guardrail(repo, "").pk, ":g": "GUARD#" },
				ProjectionExpression: "pk, sk",
				ScanIndexForward: false,
			}),
		);
		for (const old of (out.Items ?? []).slice(keep))
			await this.doc.send(
				new DeleteCommand({ TableName: this.table, Key: { pk: old.pk, sk: old.sk } }),
			);
	}

	/** The repo's newest guardrails, newest first. */
	async guardrails(repo: string, limit = MAX_GUARDRAILS): Promise<Guardrail[]> {
		const out = await this.doc.send(
			new QueryCommand({
				TableName: this.table,
				KeyConditionExpression: "pk = :pk AND begins_with(sk, :g)",
				ExpressionAttributeValues: { ":pk": key.guardrail(repo, "").pk, ":g": "GUARD#" },
				ScanIndexForward: false,
				Limit: limit,
			}),
		);
		return (out.Items ?? []).map(stripKeys<Guardrail>);
	}

	// ── at most limits.max_concurrent_runs active runs ───────────────────────────────────────

	/**
	 * Takes one of `max` run slots (a string set, so taking and giving back are idempotent). Returns
	 * how many runs hold one when none is free.
	 */
	async acquireRunSlot(
		runId: string,
		max: number,
	): Promise<{ acquired: true } | { acquired: false; active: number }> {
		try {
			await this.doc.send(
				new UpdateCommand({
					TableName: this.table,
					Key: key.runSlots,
					UpdateExpression: "ADD #runs :me",
					ConditionExpression:
						"attribute_not_exists(#runs) OR size(#runs) < :max OR contains(#runs, :id)",
					ExpressionAttributeNames: { "#runs": "runs" },
					ExpressionAttributeValues: { ":me": new Set([runId]), ":max": max, ":id": runId },
				}),
			);
			return { acquired: true };
		} catch (err) {
			if (!isConditionFailure(err)) throw err;
			return { acquired: false, active: (await this.runSlotHolders()).length };
		}
	}

	async releaseRunSlot(runId: string): Promise<void> {
		await this.doc.send(
			new UpdateCommand({
				TableName: this.table,
				Key: key.runSlots,
				UpdateExpression: "DELETE #runs :me",
				ExpressionAttributeNames: { "#runs": "runs" },
				ExpressionAttributeValues: { ":me": new Set([runId]) },
			}),
		);
	}

	async runSlotHolders(): Promise<string[]> {
		const out = await this.doc.send(
			new GetCommand({ TableName: this.table, Key: key.runSlots, ConsistentRead: true }),
		);
		const runs = out.Item?.runs as Set<string> | undefined;
		return runs ? [...runs] : [];
	}

	// ── one active run per issue ──────────────────────────────────────────────────────────────

	/** Takes the issue's lock for `runId`; returns the holder's run id when someone else has it. */
	async acquireIssueLock(
		source: string,
		issueId: string,
		runId: string,
		takeOverFrom?: string,
	): Promise<{ acquired: true } | { acquired: false; holder: string }> {
		try {
			await this.doc.send(
				new PutCommand({
					TableName: this.table,
					Item: {
						...key.issueLock(source, issueId),
						kind: "lock",
						runId,
						at: new Date().toISOString(),
					},
					ConditionExpression: takeOverFrom
						? "runId = :old"
						: "attribute_not_exists(pk) OR runId = :me",
					ExpressionAttributeValues: takeOverFrom ? { ":old": takeOverFrom } : { ":me": runId },
				}),
			);
			return { acquired: true };
		} catch (err) {
			if (!isConditionFailure(err)) throw err;
			const holder = await this.issueLockHolder(source, issueId);
			// Released in between: try again.
			if (!holder) return this.acquireIssueLock(source, issueId, runId);
			return { acquired: false, holder };
		}
	}

	/** The run holding the issue's lock, if any (it may have finished without releasing it yet). */
	async issueLockHolder(source: string, issueId: string): Promise<string | undefined> {
		const out = await this.doc.send(
			new GetCommand({
				TableName: this.table,
				Key: key.issueLock(source, issueId),
				ConsistentRead: true,
			}),
		);
		return typeof out.Item?.runId === "string" ? out.Item.runId : undefined;
	}

	async releaseIssueLock(source: string, issueId: string, runId: string): Promise<void> {
		try {
			await this.doc.send(
				new DeleteCommand({
					TableName: this.table,
					Key: key.issueLock(source, issueId),
					ConditionExpression: "runId = :me",
					ExpressionAttributeValues: { ":me": runId },
				}),
			);
		} catch (err) {
			if (!isConditionFailure(err)) throw err;
		}
	}

	// ── webhook delivery dedupe ───────────────────────────────────────────────────────────────

	/**
	 * Records a delivery (by the key of what its signature covers) as accepted, to be sent with
	 * `runId`: one conditional put, the only write an accepted webhook makes. False when the delivery
	 * was recorded before and its record has not expired.
	 */
	async claimDelivery(
		source: string,
		dedupeKey: string,
		runId: string,
		opts: { nowMs: number; ttlSeconds: number },
	): Promise<boolean> {
		const nowS = Math.floor(opts.nowMs / 1000);
		try {
			await this.doc.send(
				new PutCommand({
					TableName: this.table,
					Item: {
						...key.delivery(source, dedupeKey),
						kind: "delivery",
						runId,
						claimedAt: opts.nowMs,
						expiresAt: nowS + opts.ttlSeconds,
					},
					// TTL deletion is lazy in AWS and absent locally: an expired item counts as absent.
					ConditionExpression: "attribute_not_exists(pk) OR expiresAt < :nowS",
					ExpressionAttributeValues: { ":nowS": nowS },
				}),
			);
			return true;
		} catch (err) {
			if (isConditionFailure(err)) return false;
			throw err;
		}
	}

	/** A delivery's unexpired record, read consistently: the run id it was sent with, and when. */
	async deliveryClaim(
		source: string,
		dedupeKey: string,
		nowMs: number,
	): Promise<{ runId: string; claimedAt: number } | undefined> {
		const out = await this.doc.send(
			new GetCommand({
				TableName: this.table,
				Key: key.delivery(source, dedupeKey),
				ConsistentRead: true,
			}),
		);
		const item = out.Item;
		if (!item || typeof item.runId !== "string" || typeof item.claimedAt !== "number") return;
		if (typeof item.expiresAt === "number" && item.expiresAt < Math.floor(nowMs / 1000)) return;
		return { runId: item.runId, claimedAt: item.claimedAt };
	}

	/** Gives a claim back (enqueueing failed) so the provider's retry is accepted. */
	async releaseDelivery(source: string, dedupeKey: string, runId: string): Promise<void> {
		try {
			await this.doc.send(
				new DeleteCommand({
					TableName: this.table,
					Key: key.delivery(source, dedupeKey),
					ConditionExpression: "runId = :me",
					ExpressionAttributeValues: { ":me": runId },
				}),
			);
		} catch (err) {
			if (!isConditionFailure(err)) throw err;
		}
	}
}
