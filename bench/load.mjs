// Load generator, run in a worker thread so it does not share the server's event loop.
// Sends `n` POSTs with `concurrency` in flight; `sign` makes each a fresh, signed Linear delivery:
// its own webhookId and timestamp, so no two bodies (what Lisa deduplicates on) are the same.
import { createHmac, randomUUID } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";

const { url, n, concurrency, template, secret, sign } = workerData;

function request() {
	if (!sign) return { body: template, headers: { "content-type": "application/json" } };
	const payload = JSON.parse(template);
	payload.webhookId = randomUUID();
	payload.webhookTimestamp = Date.now();
	const body = JSON.stringify(payload);
	const signature = createHmac("sha256", secret).update(body).digest("hex");
	return {
		body,
		headers: {
			"content-type": "application/json",
			"linear-signature": signature,
			"linear-delivery": randomUUID(),
			"linear-event": "Issue",
		},
	};
}

const latencies = [];
const statuses = {};
let next = 0;
const started = performance.now();
async function lane() {
	while (next < n) {
		next++;
		const { body, headers } = request();
		const t0 = performance.now();
		const res = await fetch(url, { method: "POST", body, headers });
		await res.arrayBuffer();
		latencies.push(performance.now() - t0);
		statuses[res.status] = (statuses[res.status] ?? 0) + 1;
	}
}
await Promise.all(Array.from({ length: concurrency }, lane));
parentPort.postMessage({ seconds: (performance.now() - started) / 1000, latencies, statuses });
