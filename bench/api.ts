import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ulid } from "ulid";
import { parseConfig } from "../src/config/schema";
import { newRun, newStep, type Run } from "../src/domain/run";
import { startLocalStack } from "../src/local/stack";
import { writeResult } from "./results";

// Runs API benchmark: the dashboards' reads (newest runs, a status, a sparse repo filter, the
// stats) against a table of BENCH_RUNS runs spread over 30 days, on the embedded DynamoDB. Prints
// latency and DynamoDB requests per call as a table, writes JSON.

const RUNS = Number(process.env.BENCH_RUNS ?? 5000);
const CALLS = Number(process.env.BENCH_CALLS ?? 10);
const DAY = 86_400_000;

/** A finished run as intake and the events handler leave it: config snapshot and issue included. */
function seededRun(i: number, now: number): Run {
	const created = now - Math.floor((i / RUNS) * 30 * DAY) - 60_000;
	const at = (min: number) => new Date(created + min * 60_000).toISOString();
	// Most runs in api or web; one in a hundred in docs, the sparse filter.
	const repo = i % 100 === 0 ? "docs" : i % 2 ? "api" : "web";
	const status = i % 7 === 0 ? "failed" : "succeeded";
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
				finishedAt: at(5 + (i % 30)),
				prUrl: status === "succeeded" ? `https://github.com/acme/${repo}/pull/${i}` : undefined,
				error: status === "failed" ? "validate failed: npm test exited with code 1" : undefined,
			},
		],
		finishedAt: at(6 + (i % 30)),
		updatedAt: at(6 + (i % 30)),
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
	for (let i = 0; i < RUNS; i += 50)
		await Promise.all(
			Array.from({ length: Math.min(50, RUNS - i) }, (_, k) =>
				store.createRun(seededRun(i + k, now)),
			),
		);
	console.log(`seeded ${RUNS} runs in ${((Date.now() - seeding) / 1000).toFixed(1)} s`);

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
		ms.sort((a, b) => a - b);
		return {
			call,
			median: ms[Math.ceil(ms.length / 2) - 1] ?? 0,
			p90: ms[Math.ceil(ms.length * 0.9) - 1] ?? 0,
			dynamoRequests: (requests - before) / CALLS,
			answer,
		};
	};
	const page = (b: { runs: unknown[]; nextCursor: string | null }) =>
		`${b.runs.length} runs${b.nextCursor ? ", more" : ""}`;
	const rows = [
		await measure("/api/runs?limit=20", page),
		await measure("/api/runs?limit=20&status=failed", page),
		await measure("/api/runs?limit=20&repo=docs", page),
		await measure(
			`/api/runs?limit=20&repo=docs&since=${new Date(now - 7 * DAY).toISOString()}`,
			page,
		),
		await measure(
			"/api/stats",
			(b: { total: number; truncated: boolean }) =>
				`${b.total} runs${b.truncated ? ", truncated" : ""}`,
		),
	];
	stopCounting();

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
	await writeResult("api", { runs: RUNS, calls: CALLS, rows });
	await stack.stop();
	await rm(dir, { recursive: true, force: true });
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
