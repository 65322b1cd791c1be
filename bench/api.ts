import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { BatchWriteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import type { StatsAnswer } from "../src/api/schemas";
import { parseConfig } from "../src/config/schema";
import { STATS_FIELDS } from "../src/domain/day-stats";
import { newRun, newStep, type Run } from "../src/domain/run";
import { startLocalStack } from "../src/local/stack";
import { awsClients } from "../src/runtime/aws";
import { runItem } from "../src/store/dynamo/runs";
import { key } from "../src/store/dynamo/table";
import { runStats } from "../test/support/stats";
import { writeResult } from "./results";

// Runs API benchmark: the dashboards' reads (newest runs, a status, a sparse repo filter, the
// stats) against a table of BENCH_RUNS runs spread over 30 days, on the embedded DynamoDB, each
// run counted in its day's stats as finalize counts it. Prints latency and DynamoDB requests per
// call as a table, checks the stats against a full recount of the window, writes JSON.

const RUNS = Number(process.env.BENCH_RUNS ?? 5000);
const CALLS = Number(process.env.BENCH_CALLS ?? 10);
const DAY = 86_400_000;
/** Runs seeded at once: BatchWriteItem's 25 a request, 8 requests in flight. */
const SEED_BATCH = 200;
/** The newest runs are counted one by one, timed: what a run's finalize adds. */
const TIMED_COUNTS = 20;

/** A finished run as intake and the events handler leave it: config snapshot and issue included. */
function seededRun(i: number, now: number): Run {
	const created = now - Math.floor((i / RUNS) * 30 * DAY) - 60_000;
	const at = (min: number) => new Date(created + min * 60_000).toISOString();
	// Most runs in api or web; one in a hundred in docs, the sparse filter.
	const repo = i % 100 === 0 ? "docs" : i % 2 ? "api" : "web";
	const status = i % 7 === 0 ? "failed" : "succeeded";
	const minutes = 4 + (i % 30);
	const prUrl = status === "succeeded" ? `https://github.com/acme/${repo}/pull/${i}` : undefined;
	const run = newRun({
		runId: ulid(created),
		source: "linear",
		issueId: `bench-${i}`,
		issueKey: `ENG-${i}`,
		trigger: "webhook",
		now: at(0),
	});
	return {
		...run,
		status,
		title: `Issue ${i}: make the thing do what the customer expected`,
		issue: {
			id: `bench-${i}`,
			key: `ENG-${i}`,
			title: `Issue ${i}`,
			description: "Steps to reproduce, what happened, what was expected. ".repeat(20),
		},
		config: CONFIG,
		steps: [
			{
				...newStep(0, repo),
				status,
				provider: i % 3 ? "claude" : "gemini",
				launchedAt: at(1),
				finishedAt: at(1 + minutes),
				prUrl,
				error: status === "failed" ? "validate failed: npm test exited with code 1" : undefined,
				usage: [
					{
						attempt: 1,
						runs: [],
						total: {
							inputTokens: 40_000 + i,
							outputTokens: 6_000,
							cacheReadTokens: 0,
							cacheWriteTokens: 0,
						},
						seconds: minutes * 60,
						cost: {
							modelUsd: 0.2 + (i % 17) * 0.05,
							knownModelUsd: 0.2 + (i % 17) * 0.05,
							computeUsd: minutes * 60 * 0.000_013,
						},
					},
				],
			},
		],
		// Two in three pull requests merged.
		closedPullRequests:
			prUrl && i % 3 ? [{ url: prUrl, merged: true, at: at(2 + minutes) }] : undefined,
		finishedAt: at(2 + minutes),
		updatedAt: at(2 + minutes),
	};
}

const CONFIG = parseConfig({
	source: "linear",
	source_config: { team: "ENG", label: "lisa", pick_from: "Todo", done: "In Review" },
	repos: ["api", "web", "docs"].map((name) => ({
		name,
		url: `https://github.com/acme/${name}.git`,
		setup: ["npm ci"],
		validate: ["npm run lint", "npm test"],
	})),
});

/** The nearest-rank `p` percentile of the timings (0 without any). */
function percentile(ms: readonly number[], p: number): number {
	const sorted = [...ms].sort((a, b) => a - b);
	return sorted[Math.max(1, Math.ceil(sorted.length * p)) - 1] ?? 0;
}

interface Row {
	call: string;
	median: number;
	p90: number;
	dynamoRequests: number;
	answer: string;
}

async function main(): Promise<void> {
	process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-bench-api-"));
	const stack = await startLocalStack({
		// No agent runs here (no workers): no agent uids, whose workspaces must be reachable.
		env: {
			PATH: process.env.PATH,
			PORT: "0",
			LISA_DATA_DIR: dir,
			LOG_LEVEL: "silent",
			LISA_AGENT_UIDS: "off",
		},
		workers: false,
	});
	const { store } = stack.deps;
	const now = Date.now();
	const seeding = Date.now();
	// Written 25 a request (twice as fast as one by one on dynalite), each batch counted in its
	// days through the store (one write a day); the newest are counted one by one below.
	const { doc } = awsClients(stack.deps.settings);
	const table = stack.deps.settings.tableName;
	const write = async (runs: Run[]) => {
		let items = runs.map((r) => ({ PutRequest: { Item: runItem(r) } }));
		while (items.length) {
			const out = await doc.send(new BatchWriteCommand({ RequestItems: { [table]: items } }));
			items = (out.UnprocessedItems?.[table] ?? []) as typeof items;
		}
	};
	for (let i = TIMED_COUNTS; i < RUNS; i += SEED_BATCH) {
		const runs = Array.from({ length: Math.min(SEED_BATCH, RUNS - i) }, (_, k) =>
			seededRun(i + k, now),
		);
		await Promise.all(
			Array.from({ length: Math.ceil(runs.length / 25) }, (_, k) =>
				write(runs.slice(k * 25, k * 25 + 25)),
			),
		);
		await store.countRuns(runs);
	}
	const counts: number[] = [];
	for (let i = 0; i < Math.min(TIMED_COUNTS, RUNS); i++) {
		const run = seededRun(i, now);
		await store.createRun(run);
		const t = performance.now();
		await store.countRun(run);
		counts.push(performance.now() - t);
	}
	const countRunMs = percentile(counts, 0.5);
	console.log(
		`seeded ${RUNS} runs in ${((Date.now() - seeding) / 1000).toFixed(1)} s; countRun on today's day: median ${countRunMs.toFixed(1)} ms`,
	);

	let requests = 0;
	const stopCounting = store.observe(() => {
		requests++;
	});
	const measure = async (call: string, describe: (body: never) => string): Promise<Row> => {
		const ms: number[] = [];
		let answer = "";
		const before = requests;
		for (let n = 0; n < CALLS; n++) {
			const t = performance.now();
			const res = await fetch(`${stack.url}${call}`, {
				headers: { authorization: `Bearer ${stack.readToken}` },
			});
			const body = (await res.json()) as never;
			ms.push(performance.now() - t);
			if (res.status !== 200) throw new Error(`${call}: ${res.status} ${JSON.stringify(body)}`);
			answer = describe(body);
		}
		return {
			call,
			median: percentile(ms, 0.5),
			p90: percentile(ms, 0.9),
			dynamoRequests: (requests - before) / CALLS,
			answer,
		};
	};
	const page = (b: { runs: unknown[]; nextCursor: string | null }) =>
		`${b.runs.length} runs${b.nextCursor ? ", more" : ""}`;
	let stats: StatsAnswer | undefined;
	const rows = [
		await measure("/api/runs?limit=20", page),
		await measure("/api/runs?limit=20&status=failed", page),
		await measure("/api/runs?limit=20&repo=docs", page),
		await measure(
			`/api/runs?limit=20&repo=docs&since=${new Date(now - 7 * DAY).toISOString()}`,
			page,
		),
		await measure("/api/stats", (b: StatsAnswer) => {
			stats = b;
			return `${b.total} runs${b.truncated ? ", truncated" : ""}, $${b.cost.totalUsd?.toFixed(2)}, $${b.costPerMergedPr?.toFixed(2)} a merged PR`;
		}),
	];
	stopCounting();

	// The same window recounted from every run, as the stats did before they kept days.
	if (!stats) throw new Error("no stats");
	const recounting = performance.now();
	const all = await store.runsCreatedBetween(
		stats.window.since,
		stats.window.until,
		RUNS + 1,
		STATS_FIELDS,
	);
	const { full: _full, ...recount } = runStats(all.runs);
	const recountMs = performance.now() - recounting;
	const { window: _w, truncated: _t, medianDurationSeconds: _m, ...answer } = stats;
	const same = JSON.stringify(answer) === JSON.stringify(JSON.parse(JSON.stringify(recount)));
	console.log(
		`\nrecount of the same window (${all.runs.length} runs read): ${recountMs.toFixed(0)} ms; same numbers: ${same ? "yes" : "NO"}`,
	);
	if (!same) process.exitCode = 1;

	// A whole day's item (yesterday's: RUNS / 30 runs), as it counts against DynamoDB's 400 KB.
	const yesterday = new Date(now - DAY).toISOString().slice(0, 10);
	const day = await doc.send(new GetCommand({ TableName: table, Key: key.stats(yesterday) }));
	const dayItemKb = Buffer.byteLength(JSON.stringify(day.Item ?? {})) / 1024;
	console.log(`a whole day's stats item: ${dayItemKb.toFixed(0)} KB`);

	console.log(
		`\nRuns API over ${RUNS} runs in 30 days (embedded DynamoDB), ${CALLS} calls each, Node ${process.version}, ${os.cpus().length} cores\n`,
	);
	console.log("| call | median ms | p90 ms | DynamoDB requests | answer |");
	console.log("|---|---:|---:|---:|---|");
	for (const r of rows)
		console.log(
			`| ${r.call} | ${r.median.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.dynamoRequests} | ${r.answer} |`,
		);
	console.log("");
	await writeResult("api", {
		runs: RUNS,
		calls: CALLS,
		rows,
		countRunMedianMs: countRunMs,
		dayItemKb,
		recount: { ms: recountMs, runs: all.runs.length, same },
	});
	await stack.stop();
	await rm(dir, { recursive: true, force: true });
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
