import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { startLocalStack } from "../src/local/stack";
import { awsClients } from "../src/runtime/aws";
import { startLinearDouble } from "../test/doubles/linear/server";
import { issueWebhook } from "../test/doubles/linear/webhook";
import { writeResult } from "./results";

// Ingest benchmark: signed Linear webhooks with distinct deliveries against the local stack's API,
// beside a bare Hono route on the same server setup (the ceiling) and a reference route that does
// what an accepted webhook cannot do without: check the HMAC and make one conditional put on the
// same embedded store. Prints a table, writes JSON.

const N = Number(process.env.BENCH_N ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** The reference route and ingest take turns, N / ROUNDS requests each. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECRET = "lin_whs_benchsecret0123456789";

interface Result {
	target: string;
	requests: number;
	statuses: Record<string, number>;
	throughput: number;
	p50: number;
	p99: number;
}

interface Sample {
	seconds: number;
	latencies: number[];
	statuses: Record<string, number>;
}

function load(url: string, n: number, template: string, sign: boolean): Promise<Sample> {
	return new Promise((resolve, reject) => {
		const worker = new Worker(new URL("./load.mjs", import.meta.url), {
			workerData: { url, n, concurrency: CONCURRENCY, template, secret: SECRET, sign },
		});
		worker.once("error", reject);
		worker.once("message", (m: Sample) => resolve(m));
	});
}

/** One target's figures over several samples: throughput over their total time, pooled latencies. */
function summarize(target: string, samples: Sample[]): Result {
	const sorted = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
	const pct = (p: number) =>
		sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
	const statuses: Record<string, number> = {};
	for (const s of samples)
		for (const [k, v] of Object.entries(s.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
	const seconds = samples.reduce((t, s) => t + s.seconds, 0);
	return {
		target,
		requests: sorted.length,
		statuses,
		throughput: sorted.length / seconds,
		p50: pct(50),
		p99: pct(99),
	};
}

async function main() {
	process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
	const dir = await mkdtemp(path.join(os.tmpdir(), "lisa-bench-"));
	const linear = await startLinearDouble();
	const team = linear.addTeam({ key: "ENG", name: "Engineering" });
	linear.addLabel(team.id, "lisa");
	const issue = linear.addIssue({
		teamKey: "ENG",
		title: "Bench issue",
		state: "Todo",
		labels: ["lisa"],
	});
	const config = path.join(dir, "config.yaml");
	await writeFile(
		config,
		"repos: [{name: api, url: 'file:///dev/null', slug: acme/api}]\nsource_config: {team: ENG, label: lisa}\n",
	);
	const stack = await startLocalStack({
		workers: false,
		env: {
			...process.env,
			PORT: "0",
			LOG_LEVEL: "silent",
			LISA_DATA_DIR: path.join(dir, "data"),
			// No agent runs here (no workers): no agent uids, whose workspaces must be reachable.
			LISA_AGENT_UIDS: "off",
			LISA_CONFIG: config,
			LINEAR_API_KEY: linear.apiKey,
			LINEAR_API_URL: linear.url,
			LINEAR_WEBHOOK_SECRET: SECRET,
		},
	});
	// The reference: the signature check and one conditional PutItem (the delivery's claim), on the
	// stack's own dynalite and table; nothing else.
	const { doc } = awsClients(stack.settings);
	const table = stack.settings.tableName;
	const bareApp = new Hono()
		.post("/bare", (c) => c.text("ok"))
		.post("/hmac-put", async (c) => {
			const raw = Buffer.from(await c.req.arrayBuffer());
			const given = Buffer.from(c.req.header("linear-signature") ?? "");
			const expected = Buffer.from(createHmac("sha256", SECRET).update(raw).digest("hex"));
			if (given.length !== expected.length || !timingSafeEqual(given, expected))
				return c.json({ error: "signature does not match" }, 401);
			const key = createHash("sha256").update(raw).digest("hex");
			try {
				await doc.send(
					new PutCommand({
						TableName: table,
						Item: { pk: `DELIVERY#bench#${key}`, sk: "DELIVERY", claimedAt: Date.now() },
						ConditionExpression: "attribute_not_exists(pk)",
					}),
				);
			} catch (err) {
				if ((err as Error).name === "ConditionalCheckFailedException")
					return c.json({ duplicate: true }, 200);
				throw err;
			}
			return c.json({ ok: true }, 202);
		});
	const bare = serve({ fetch: bareApp.fetch, port: 0, hostname: "127.0.0.1" });
	await new Promise((r) => bare.once("listening", r));
	const bareBase = `http://127.0.0.1:${(bare.address() as { port: number }).port}`;
	const bareUrl = `${bareBase}/bare`;
	const referenceUrl = `${bareBase}/hmac-put`;
	const template = JSON.stringify(issueWebhook({ action: "create", issue, double: linear }));

	// Warm both paths (JIT, connection pools, Lisa's one-time lookup of its own Linear user).
	await load(bareUrl, 200, template, false);
	await load(referenceUrl, 200, template, true);
	await load(`${stack.url}/webhooks/linear`, 200, template, true);

	// The reference and ingest alternate in rounds, so a change in the machine's load (other
	// processes, the store growing) weighs on both alike.
	const bareResult = summarize("bare Hono route (ceiling)", [
		await load(bareUrl, N, template, false),
	]);
	const referenceSamples: Sample[] = [];
	const ingestSamples: Sample[] = [];
	let dynamoRequests = 0;
	for (let round = 0; round < ROUNDS; round++) {
		referenceSamples.push(await load(referenceUrl, N / ROUNDS, template, true));
		const stopCounting = stack.deps.store.observe(() => {
			dynamoRequests++;
		});
		ingestSamples.push(await load(`${stack.url}/webhooks/linear`, N / ROUNDS, template, true));
		stopCounting();
	}
	const reference = summarize("HMAC + one conditional put (reference)", referenceSamples);
	const ingest = summarize("POST /webhooks/linear", ingestSamples);
	const accepted = ingest.statuses["202"] ?? 0;

	const rows = [bareResult, reference, ingest];
	console.log(
		`\nIngest benchmark: ${N} requests, ${CONCURRENCY} in flight, ${ROUNDS} alternating rounds, Node ${process.version}, ${os.cpus().length} cores\n`,
	);
	console.log("| target | requests | statuses | req/s | p50 ms | p99 ms |");
	console.log("|---|---:|---|---:|---:|---:|");
	for (const r of rows)
		console.log(
			`| ${r.target} | ${r.requests} | ${JSON.stringify(r.statuses)} | ${r.throughput.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`,
		);
	const perWebhook = accepted ? dynamoRequests / accepted : Number.NaN;
	console.log(
		`\nDynamoDB requests per accepted webhook: ${perWebhook.toFixed(2)} (${dynamoRequests} for ${accepted} accepted)`,
	);
	const ofReference = ingest.throughput / reference.throughput;
	console.log(
		`Ingest throughput is ${ofReference.toFixed(2)}× the reference route's and ${((ingest.throughput / bareResult.throughput) * 100).toFixed(1)}% of the bare route's.\n`,
	);

	await writeResult("ingest", {
		n: N,
		concurrency: CONCURRENCY,
		rounds: ROUNDS,
		rows,
		dynamoRequestsPerAcceptedWebhook: perWebhook,
		ingestToReference: ofReference,
	});

	await new Promise((r) => bare.close(r));
	await stack.stop();
	await linear.stop();
	await rm(dir, { recursive: true, force: true });
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
