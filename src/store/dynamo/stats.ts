import { setTimeout as sleep } from "node:timers/promises";
import { BatchGetCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import {
	addMerge,
	type DayLedger,
	type DayStats,
	dayOf,
	emptyDay,
	foldRun,
	runsByDay,
	statsPart,
} from "../../domain/day-stats";
import type { StatsStore } from "../stats";
import { type DynamoTable, isConditionFailure } from "./client";
import { key } from "./table";

/** Writers of one day that lose the version race read it again; this many tries, then the caller retries. */
const TRIES = 40;
/** BatchGetItem takes at most 100 keys. */
const BATCH = 100;

/**
 * One item a day (`STATS#<day>`): the stats as JSON in `stats`, what was counted in `runIds` and
 * `prUrls`, which the stats' read leaves out. Each change reads the day, folds into it and writes it back
 * if its version did not move (dynalite has no transactions); a writer that lost reads again.
 */
export function dynamoStats(t: DynamoTable): StatsStore {
	async function change(day: string, fold: (ledger: DayLedger) => boolean): Promise<void> {
		for (let tries = 1; ; tries++) {
			const out = await t.doc.send(
				new GetCommand({ TableName: t.name, Key: key.stats(day), ConsistentRead: true }),
			);
			const item = out.Item;
			const version = typeof item?.version === "number" ? item.version : 0;
			const ledger: DayLedger = item
				? {
						...JSON.parse(String(item.stats)),
						runIds: item.runIds ? String(item.runIds).split(",") : [],
						prUrls: item.prUrls ? String(item.prUrls).split(" ") : [],
						bytes: Number(item.bytes ?? 0),
					}
				: emptyDay(day);
			if (!fold(ledger)) return;
			try {
				await t.doc.send(
					new PutCommand({
						TableName: t.name,
						Item: {
							...key.stats(day),
							kind: "stats",
							version: version + 1,
							stats: JSON.stringify(statsPart(ledger)),
							// Plain lists, not JSON: nothing to escape, so the item is quick to read.
							...(ledger.runIds.length ? { runIds: ledger.runIds.join(",") } : {}),
							...(ledger.prUrls.length ? { prUrls: ledger.prUrls.join(" ") } : {}),
							bytes: ledger.bytes,
						},
						ConditionExpression: item ? "#v = :v" : "attribute_not_exists(pk)",
						...(item
							? {
									ExpressionAttributeNames: { "#v": "version" },
									ExpressionAttributeValues: { ":v": version },
								}
							: {}),
					}),
				);
				return;
			} catch (err) {
				if (!isConditionFailure(err) || tries >= TRIES) throw err;
				await sleep(Math.random() * Math.min(200, 2 ** tries));
			}
		}
	}

	const countRuns: StatsStore["countRuns"] = async (runs) => {
		await Promise.all(
			[...runsByDay(runs)].map(([day, list]) =>
				change(day, (ledger) => list.reduce((changed, r) => foldRun(ledger, r) || changed, false)),
			),
		);
	};

	return {
		countRun: (run) => countRuns([run]),
		countRuns,

		async countMerge(run, prUrl) {
			await change(dayOf(run.createdAt), (ledger) => addMerge(ledger, prUrl));
		},

		async dayStats(days) {
			const out: DayStats[] = [];
			for (let i = 0; i < days.length; i += BATCH) {
				let keys: Record<string, unknown>[] = days.slice(i, i + BATCH).map(key.stats);
				for (let round = 0; keys.length; round++) {
					// Keys left for later (throttled, or over 16 MB) are asked again after a pause.
					if (round) await sleep(Math.random() * Math.min(1000, 50 * 2 ** round));
					const res = await t.doc.send(
						new BatchGetCommand({
							RequestItems: {
								[t.name]: {
									Keys: keys,
									ConsistentRead: true,
									ProjectionExpression: "#s",
									ExpressionAttributeNames: { "#s": "stats" },
								},
							},
						}),
					);
					for (const item of res.Responses?.[t.name] ?? [])
						out.push(JSON.parse(String(item.stats)));
					keys = res.UnprocessedKeys?.[t.name]?.Keys ?? [];
				}
			}
			return out.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
		},
	};
}
