import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { encodeTime } from "ulid";
import { type Run, type RunPatch, type Step, workSteps } from "../../domain/run";
import type { RunStatus } from "../../domain/states";
import { VersionConflict } from "../errors";
import type { Page, RunFilter, RunStore, TaskStepFields } from "../runs";
import { type DynamoTable, isConditionFailure, stripKeys } from "./client";
import { decodeCursor, runCursor } from "./cursor";
import { Expression } from "./expression";
import { INDEXES, type IndexName, key } from "./table";

/**
 * How far a run's id (a ULID, made when the run was requested) may precede its creation: the
 * requests a queue outage held back. The id range only narrows the read; createdAt decides.
 */
const REQUEST_TO_CREATE_MARGIN_MS = 24 * 3600 * 1000;

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

/** A run as its item: the run, its keys and what its indexes and filters read. */
export const runItem = (run: Run) => ({
	...key.run(run.runId),
	kind: "run",
	...runIndexKeys(run, run.updatedAt),
	repoNames: repoNames(run.steps),
	...run,
});

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

/**
 * Runs in the single table. A run and its steps are one item, so every transition is one
 * version-checked conditional update; there are no transactions and no Scans.
 */
export function dynamoRuns(t: DynamoTable): RunStore {
	return {
		/** Creates the run; false when a run with this id already exists (a redelivered request). */
		async createRun(run: Run): Promise<boolean> {
			try {
				await t.doc.send(
					new PutCommand({
						TableName: t.name,
						Item: runItem(run),
						ConditionExpression: "attribute_not_exists(pk)",
					}),
				);
				return true;
			} catch (err) {
				if (isConditionFailure(err)) return false;
				throw err;
			}
		},

		async getRun(runId: string): Promise<Run | undefined> {
			const out = await t.doc.send(
				new GetCommand({ TableName: t.name, Key: key.run(runId), ConsistentRead: true }),
			);
			return out.Item ? toRun(out.Item) : undefined;
		},

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
				const out = await t.doc.send(
					new UpdateCommand({
						TableName: t.name,
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
		},

		/**
		 * The task's own writes: fields of its step (heartbeat, agent state, report), only while the step
		 * is still on the task's attempt and still launching or running: false tells the task of a
		 * cancelled, finished or superseded attempt to stop. Never touches the run's status or version.
		 */
		async updateStepFields(
			runId: string,
			stepIndex: number,
			attempt: number,
			fields: TaskStepFields,
		): Promise<boolean> {
			const e = new Expression();
			const step = `${e.name("steps")}[${stepIndex}]`;
			for (const [field, v] of Object.entries(fields)) e.assign(`${step}.${e.name(field)}`, v);
			try {
				await t.doc.send(
					new UpdateCommand({
						TableName: t.name,
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
		},

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
			return t.queryPage(
				{
					TableName: t.name,
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
		},

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
				const out = await t.doc.send(
					new QueryCommand({
						TableName: t.name,
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
		},

		/** Runs in `status` last updated in [after, before) (ISO times), oldest first — the sweeper's query. */
		async runsByStatus(
			status: RunStatus,
			window: { after?: string; before: string },
			limit = 100,
		): Promise<Run[]> {
			const page = await t.queryPage(
				{
					TableName: t.name,
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
		},

		async runsOfIssue(source: string, issueId: string, limit = 20): Promise<Run[]> {
			const page = await t.queryPage(
				{
					TableName: t.name,
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
		},
	};
}
